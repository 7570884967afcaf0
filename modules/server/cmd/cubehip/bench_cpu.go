package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/hostloop"
	"github.com/cubehip/cubehip/modules/hipsys/paired"
	"github.com/cubehip/cubehip/modules/server"
)

// cpuKernel is one kernel of the cpu device's section, paired with the plain
// single-threaded C loop (compiled by the same g++ at -O2) that does its work.
type cpuKernel struct {
	name, entry, source string
	block, grid         hipsys.Dim3
	shared              uint32
	// in and out are the lengths of the kernel's two buffers (float32 or int32); n and m
	// its scalar arguments and the loop's.
	in, out int
	ints    bool // the buffers hold int32
	n, m    int64
	loop    string // the C loop, `extern "C" void loop(void* in, void* out, void*, int64_t n, int64_t m)`
	scan    bool   // held to the scan's budget
}

// cpuKernels are the section's kernels: the barrier kernels cubehip runs as regions, a
// plain stencil and a warp-shuffle reduction.
var cpuKernels = []cpuKernel{
	{
		name: "reduce 1M, shared", entry: "reduce", block: dim1(256), grid: dim1(4096), in: 1 << 20, out: 4096, n: 1 << 20,
		source: `extern "C" __global__ void reduce(const float* in, float* out, int n) {
	__shared__ float s[256];
	int t = threadIdx.x;
	s[t] = in[blockIdx.x * blockDim.x + t];
	__syncthreads();
	for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
		if (t < stride) s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}`,
		loop: `extern "C" void loop(void* a, void* b, void*, int64_t n, int64_t) {
	const float* in = (const float*)a;
	float* out = (float*)b;
	for (int64_t k = 0; k < n / 256; k++) {
		float s = 0;
		for (int j = 0; j < 256; j++) s += in[k * 256 + j];
		out[k] = s;
	}
}`,
	},
	{
		name: "scan 256K, Hillis-Steele", entry: "scan", block: dim1(512), grid: dim1(512), in: 1 << 18, out: 1 << 18, n: 1 << 18, scan: true,
		source: `extern "C" __global__ void scan(const float* in, float* out, int n) {
	__shared__ float s[512];
	int t = threadIdx.x;
	int i = blockIdx.x * blockDim.x + t;
	s[t] = in[i];
	__syncthreads();
	for (int off = 1; off < blockDim.x; off <<= 1) {
		float v = t >= off ? s[t - off] : 0.0f;
		__syncthreads();
		s[t] += v;
		__syncthreads();
	}
	out[i] = s[t];
}`,
		loop: `extern "C" void loop(void* a, void* b, void*, int64_t n, int64_t) {
	const float* in = (const float*)a;
	float* out = (float*)b;
	for (int64_t k = 0; k < n; k += 512) {
		float s = 0;
		for (int j = 0; j < 512; j++) out[k + j] = s += in[k + j];
	}
}`,
	},
	{
		name: "matmul 256³, 16×16 tiles", entry: "matmul", block: hipsys.Dim3{X: 16, Y: 16, Z: 1}, grid: hipsys.Dim3{X: 16, Y: 16, Z: 1},
		in: 2 * 256 * 256, out: 256 * 256, n: 256,
		source: `extern "C" __global__ void matmul(const float* in, float* out, int n) {
	__shared__ float As[16][16], Bs[16][16];
	const float* A = in;
	const float* B = in + n * n;
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
	float acc = 0.0f;
	for (int k0 = 0; k0 < n; k0 += 16) {
		As[ty][tx] = A[row * n + k0 + tx];
		Bs[ty][tx] = B[(k0 + ty) * n + col];
		__syncthreads();
		for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];
		__syncthreads();
	}
	out[row * n + col] = acc;
}`,
		loop: `extern "C" void loop(void* a, void* b, void*, int64_t n, int64_t) {
	const float* A = (const float*)a;
	const float* B = A + n * n;
	float* C = (float*)b;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++) {
			float acc = 0;
			for (int64_t k = 0; k < n; k++) acc += A[i * n + k] * B[k * n + j];
			C[i * n + j] = acc;
		}
}`,
	},
	{
		name: "Jacobi 1024², no barrier", entry: "jacobi", block: dim1(256), grid: hipsys.Dim3{X: 4, Y: 1022, Z: 1},
		in: 1 << 20, out: 1 << 20, n: 1024,
		source: `extern "C" __global__ void jacobi(const float* in, float* out, int n) {
	int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int y = blockIdx.y + 1;
	if (x < n - 1) out[y * n + x] = 0.25f * (in[y * n + x - 1] + in[y * n + x + 1] + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}`,
		loop: `extern "C" void loop(void* a, void* b, void*, int64_t n, int64_t) {
	const float* in = (const float*)a;
	float* out = (float*)b;
	for (int64_t y = 1; y < n - 1; y++)
		for (int64_t x = 1; x < n - 1; x++)
			out[y * n + x] = 0.25f * (in[y * n + x - 1] + in[y * n + x + 1] + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}`,
	},
	{
		name: "histogram 4M, shared atomics", entry: "hist", block: dim1(256), grid: dim1(16), in: 1 << 22, out: 256, n: 1 << 22, ints: true,
		// Each block bins a contiguous chunk, each thread a contiguous run of it: on a GPU
		// one would interleave the threads for coalescing, but the cpu device runs a
		// block's threads one after another, and interleaved runs (a grid-stride loop)
		// walk memory with a stride of the grid (docs/benchmarks.md has both). The grid
		// is a few blocks per core, as one sizes a grid by the multiprocessors (the cpu
		// device's are its cores): each thread's run is then long enough to repay
		// starting it.
		source: `extern "C" __global__ void hist(const int* in, int* out, int n) {
	__shared__ int h[256];
	int t = threadIdx.x;
	h[t] = 0;
	__syncthreads();
	int chunk = (n + gridDim.x - 1) / gridDim.x, run = (chunk + blockDim.x - 1) / blockDim.x;
	int begin = blockIdx.x * chunk + t * run, end = min(begin + run, min((blockIdx.x + 1) * chunk, n));
	for (int i = begin; i < end; i++) atomicAdd(&h[in[i] & 255], 1);
	__syncthreads();
	atomicAdd(&out[t], h[t]);
}`,
		loop: `extern "C" void loop(void* a, void* b, void*, int64_t n, int64_t) {
	const int* in = (const int*)a;
	int* out = (int*)b;
	for (int64_t i = 0; i < n; i++) out[in[i] & 255]++;
}`,
	},
	{
		name: "reduce 1M, warp shuffles", entry: "reduce_warp", block: dim1(256), grid: dim1(4096), in: 1 << 20, out: 4096, n: 1 << 20,
		source: `extern "C" __global__ void reduce_warp(const float* in, float* out, int n) {
	__shared__ float partial[256 / 32];
	int t = threadIdx.x;
	float v = in[blockIdx.x * blockDim.x + t];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	if (t % warpSize == 0) partial[t / warpSize] = v;
	__syncthreads();
	if (t == 0) {
		float s = 0.0f;
		for (int w = 0; w < 256 / warpSize; w++) s += partial[w];
		out[blockIdx.x] = s;
	}
}`,
		loop: `extern "C" void loop(void* a, void* b, void*, int64_t n, int64_t) {
	const float* in = (const float*)a;
	float* out = (float*)b;
	for (int64_t k = 0; k < n / 256; k++) {
		float s = 0;
		for (int j = 0; j < 256; j++) s += in[k * 256 + j];
		out[k] = s;
	}
}`,
	},
}

func dim1(x uint32) hipsys.Dim3 { return hipsys.Dim3{X: x, Y: 1, Z: 1} }

// cpuBudget is what a kernel must reach against its single-threaded C loop (the loop's
// time over the kernel's) on a machine of cores cores: 1× at 2 cores or fewer, 4× at 16
// or more, and in between on the line joining them; the block scan, which does
// log2(512) times the loop's additions, a fifth of that (0.2× to 1×).
func cpuBudget(cores int, scan bool) float64 {
	f := min(max(float64(cores-2)/14, 0), 1)
	r := 1 + 3*f
	if scan {
		r = 0.2 + 0.8*f
	}
	return r
}

// fasterThan holds a kernel's time to at most its loop's over times.
func fasterThan(times float64, cores int) func(device, raw float64) (bool, string) {
	return func(device, raw float64) (bool, string) {
		return raw/device >= times, fmt.Sprintf("at least %.2f× the C loop at %d cores (%.2f×)", times, cores, raw/device)
	}
}

// cpuSection measures each cpu kernel against its C loop, paired in the same run.
func (b *bencher) cpuSection() ([]figure, error) {
	cores := runtime.NumCPU()
	fmt.Fprintf(b.out, "cpu kernels against single-threaded C loops (g++ -O2), %d cores:\n", cores)
	var figs []figure
	for _, k := range cpuKernels {
		f, err := b.cpuKernel(k, cores)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

func (b *bencher) cpuKernel(k cpuKernel, cores int) (figure, error) {
	d := b.d
	loop, err := hostloop.Compile(k.loop, "loop")
	if err != nil {
		return figure{}, err
	}
	kern := server.DefineKernel(k.source, k.entry, server.Block(k.block), server.IO(server.Read, server.Write), server.SharedMem(k.shared))
	if err := d.Compile(kern); err != nil {
		return figure{}, err
	}
	// The same inputs on both sides: small values, so float sums stay exact enough and
	// the histogram's bins are spread.
	inF := make([]float32, k.in)
	inI := make([]int32, k.in)
	for i := range inF {
		inF[i] = float32((i*7919)%17) / 16
		inI[i] = int32((i * 2654435761) >> 7 & 0x7fffffff)
	}
	outF := make([]float32, k.out)
	outI := make([]int32, k.out)
	var in, out *server.Buffer
	if k.ints {
		in, err = server.UploadSlice(d.Stream, inI)
		if err == nil {
			out, err = server.AllocSlice[int32](d.Stream, k.out)
		}
	} else {
		in, err = server.UploadSlice(d.Stream, inF)
		if err == nil {
			out, err = server.AllocSlice[float32](d.Stream, k.out)
		}
	}
	if err != nil {
		return figure{}, err
	}
	defer in.Release()
	defer out.Release()
	run := func() error {
		if err := d.Call(kern, k.grid, in.Arg(), out.Arg(), server.I32(int32(k.n))); err != nil {
			return err
		}
		return d.Sync()
	}
	a, o := unsafe.Pointer(&inF[0]), unsafe.Pointer(&outF[0])
	if k.ints {
		a, o = unsafe.Pointer(&inI[0]), unsafe.Pointer(&outI[0])
	}
	c := func() error {
		loop.Run(a, o, nil, k.n, k.m)
		return nil
	}
	// Warm both: first touches and the pool's start are not what is measured.
	if err := run(); err != nil {
		return figure{}, err
	}
	c()
	// Rounds of one call each side, alternating which goes first; the median of the
	// rounds' ratios is the comparison (bencher.paired says why), over fewer rounds than
	// a launch's: one call here is milliseconds, not microseconds.
	rounds := max(7, min(31, b.count(31))) | 1
	fmt.Fprintf(b.out, "  %-36s", k.name)
	res, err := paired.Run(rounds, paired.Block(1, run, nil), paired.Block(1, c, nil))
	if err != nil {
		fmt.Fprintln(b.out)
		return figure{}, err
	}
	dev, raw, ratio := paired.Of(res.A).Median, paired.Of(res.B).Median, res.Ratio().Median
	fmt.Fprintf(b.out, " %10.1f µs against %10.1f, %.2f× the C loop\n", dev, raw, 1/ratio)
	return figure{name: k.name, unit: "µs", device: dev, raw: raw, ratio: ratio, rawFrom: "C loop", cpu: true,
		budget: fasterThan(cpuBudget(cores, k.scan), cores)}, nil
}
