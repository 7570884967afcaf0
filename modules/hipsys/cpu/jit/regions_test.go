package jit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// regionKernels are barrier kernels the jit turns into regions (TestRegionsKernelsRun
// checks that it does), one construct each. Every one takes (in, out, n) over ints, so
// the two ways of running them must agree exactly.
const regionKernels = `
#define SCALE 3
struct pair { int a, b; };
__device__ int quarter() { return threadIdx.x % 4; } // reads the thread-local index

// Barriers at the top level and in a uniform for loop; extern shared memory.
extern "C" __global__ void reduce_tree(const int* in, int* out, int n) {
	extern __shared__ int s[];
	unsigned t = threadIdx.x;
	unsigned i = blockIdx.x * blockDim.x + t;
	s[t] = i < n ? in[i] : 0;
	__syncthreads();
	for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
		if (t % (2 * stride) == 0 && t + stride < blockDim.x) s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}

// Hillis-Steele: a local of the loop body lives across the barrier between read and write.
extern "C" __global__ void scan_hs(const int* in, int* out, int n) {
	extern __shared__ int s[];
	int t = threadIdx.x;
	int i = blockIdx.x * blockDim.x + t;
	s[t] = i < n ? in[i] : 0;
	__syncthreads();
	for (unsigned off = 1; off < blockDim.x; off <<= 1) {
		int v = t >= off ? s[t - off] : 0;
		__syncthreads();
		s[t] += v;
		__syncthreads();
	}
	if (i < n) out[i] = s[t];
}

// Square tiles of blockDim.x: two-dimensional blocks and grids, an accumulator in a slot.
extern "C" __global__ void matmul(const int* in, int* out, int n) {
	extern __shared__ int tiles[];
	const int tile = blockDim.x;
	int* As = tiles;
	int* Bs = tiles + tile * tile;
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
	int acc = 0;
	for (int k0 = 0; k0 < n; k0 += tile) {
		As[ty * tile + tx] = row < n && k0 + tx < n ? in[row * n + k0 + tx] : 0;
		Bs[ty * tile + tx] = col < n && k0 + ty < n ? in[(k0 + ty) * n + col] % 7 : 0;
		__syncthreads();
		for (int k = 0; k < tile; k++) acc += As[ty * tile + k] * Bs[k * tile + tx];
		__syncthreads();
	}
	if (row < n && col < n) out[row * n + col] = acc;
}

// Threads past n return before the second barrier; the others go on.
extern "C" __global__ void early(const int* in, int* out, int n) {
	extern __shared__ int s[];
	int t = threadIdx.x;
	int m = n % (int)blockDim.x + 1;
	s[t] = -1;
	__syncthreads();
	if (t >= m) return;
	s[t] = in[t] * 2;
	__syncthreads();
	if (t == 0 && blockIdx.x == 1) return;
	out[blockIdx.x * blockDim.x + t] = s[t] + s[(t + 1) % m];
}

// Barriers in both branches of a block-uniform if, a do-while and nested loops.
extern "C" __global__ void branches(const int* in, int* out, int n) {
	extern __shared__ int s[];
	const int t = threadIdx.x;
	const int base = blockIdx.x * blockDim.x;
	s[t] = in[(base + t) % n];
	__syncthreads();
	if (blockIdx.x % 2 == 0) {
		int v = s[blockDim.x - 1 - t];
		__syncthreads();
		s[t] = v * SCALE;
	} else {
		for (int r = 0; r < 2; r++) {
			for (int step = 1; step < 4; step++) {
				int v = s[(t + step) % blockDim.x];
				__syncthreads();
				s[t] = (s[t] + v) % 1000;
				__syncthreads();
			}
		}
	}
	__syncthreads();
	int rounds = 0;
	do {
		int w = s[(t + 1) % blockDim.x];
		__syncthreads();
		s[t] -= w;
		__syncthreads();
		rounds++;
	} while (false);
	if (n > 0) __syncthreads();
	{
		int u = s[t];
		__syncthreads();
		s[(t + 1) % blockDim.x] = u + rounds;
	}
	__syncthreads();
	out[base + t] = s[t];
}

// A three-dimensional block reversed through shared memory, with HIP's index macros and a
// __device__ function reading threadIdx.
extern "C" __global__ void cube(const int* in, int* out, int n) {
	extern __shared__ int s[];
	int lin = hipThreadIdx_x + hipBlockDim_x * (hipThreadIdx_y + hipBlockDim_y * hipThreadIdx_z);
	int nt = blockDim.x * blockDim.y * blockDim.z;
	s[lin] = in[(blockIdx.x * nt + lin) % n] + quarter();
	for (int k = 0; k < 2; k++) __syncthreads();
	if (threadIdx.x == 1) s[lin] += 7; // one thread of a row, a row of threads in 3-D
	__syncthreads();
	if (hipThreadIdx_x % 2 == 0) s[lin] -= 5;
	__syncthreads();
	out[blockIdx.x * nt + lin] = s[nt - 1 - lin] + lin;
}

// Atomics on shared and global memory between barriers.
extern "C" __global__ void hist(const int* in, int* out, int n) {
	__shared__ int h[64];
	for (int b = threadIdx.x; b < 64; b += blockDim.x) h[b] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&h[(in[i] & 0x7fffffff) % 64], 1);
	__syncthreads();
	for (int b = threadIdx.x; b < 64; b += blockDim.x) atomicAdd(&out[b], h[b]);
}

// Warp shuffles of every kind between barriers, with widths and the _sync forms: a warp
// sum, a butterfly, an inclusive warp scan and a broadcast per 8-lane segment.
extern "C" __global__ void shuffles(const int* in, int* out, int n) {
	extern __shared__ int s[];
	unsigned t = threadIdx.x;
	int v = in[(blockIdx.x * blockDim.x + t) % n];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	int b = v;
	for (int m = 1; m < warpSize; m *= 2) b += __shfl_xor_sync(0xffffffffu, b, m);
	int up = in[t % n];
	for (unsigned d = 1; d < 16; d *= 2) {
		int w = __shfl_up(up, d, 16);
		if ((t & 15) >= d) up += w;
	}
	int bc = __shfl(up, 3, 8);
	float f = __shfl_down_sync(0xffffffffu, (float)v * 0.5f, 1);
	s[t] = v + b + up + bc + (int)f;
	__syncthreads();
	out[blockIdx.x * blockDim.x + t] = s[t] + s[(t + 33) % blockDim.x];
}

// The warp-shuffle block reduction of the benchmarks: warps reduce, thread 0 adds the warps.
extern "C" __global__ void reduce_warp(const int* in, int* out, int n) {
	__shared__ int partial[1024 / 32];
	unsigned t = threadIdx.x;
	int v = in[(blockIdx.x * blockDim.x + t) % n];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	if (t % warpSize == 0) partial[t / warpSize] = v;
	__syncthreads();
	if (t == 0) {
		int sum = 0;
		for (unsigned w = 0; w < (blockDim.x + warpSize - 1) / warpSize; w++) sum += partial[w];
		out[blockIdx.x] = sum;
	}
}

// Warp steps only some threads take: lanes below 5 of each warp shuffle among themselves
// (a divergent if: a shuffle from a lane that skipped it leaves the caller's value), and
// the first warp reduces the warps' sums (a warp-uniform if around a loop of shuffles).
extern "C" __global__ void warp_ifs(const int* in, int* out, int n) {
	__shared__ int sums[1024 / 32];
	const int t = threadIdx.x, lane = t % warpSize, warp = t / warpSize;
	int v = in[(blockIdx.x * blockDim.x + t) % n];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	if (lane == 0) sums[warp] = v;
	int u = in[t % n];
	if (lane < 5) {
		u += __shfl_down(u, 2);
		u += __shfl_xor(u, 1) * 3;
	}
	__syncthreads();
	if (warp == 0) {
		const int warps = (blockDim.x + warpSize - 1) / warpSize;
		int s = lane < warps ? sums[lane] : 0;
		for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down(s, o);
		if (lane == 0) out[blockIdx.x * blockDim.x] = s;
	}
	if (t > 0) out[blockIdx.x * blockDim.x + t] = u;
}

// Shuffles behind three thread-dependent ifs, one inside the other: the second's condition
// reads what only the first one's threads may (in[] below n), and each body's shuffles
// read only lanes that took every if around them. A lane that skips an if reaches no
// other shuffle (the fibers would group it with those inside: lanes that diverge to
// different shuffles form one collective there).
extern "C" __global__ void warp_nested(const int* in, int* out, int n) {
	const int t = threadIdx.x, lane = t % warpSize;
	int v = in[(blockIdx.x * blockDim.x + t) % n];
	if (t < n) {
		v += __shfl_down(v, 1);
		if (in[t] % 3 != 0) {
			v += __shfl_xor(v, 2);
			if (lane > 3) v += __shfl_up(v, 3) * 5;
		}
	}
	out[blockIdx.x * blockDim.x + t] = v;
}

// A block sum through a __device__ helper of shuffles (inline.go puts it in the entry),
// called by every thread and again by the first warp only.
__device__ inline int warp_sum(int v) {
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	return v;
}
extern "C" __global__ void helper_sum(const int* in, int* out, int n) {
	__shared__ int sums[1024 / 32];
	const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
	int v = in[(blockIdx.x * blockDim.x + threadIdx.x) % n];
	v = warp_sum(v);
	if (lane == 0) sums[warp] = v;
	__syncthreads();
	if (warp == 0) {
		int s = lane < (blockDim.x + warpSize - 1) / warpSize ? sums[lane] : 0;
		s = warp_sum(s);
		if (lane == 0) out[blockIdx.x] = s;
	}
}

// An array, a struct and a value read from shared memory live across barriers.
extern "C" __global__ void locals(const int* in, int* out, int n) {
	extern __shared__ int s[];
	int t = threadIdx.x;
	int acc[3];
	pair p;
	p.a = in[(blockIdx.x * blockDim.x + t) % n];
	p.b = t;
	for (int k = 0; k < 3; k++) acc[k] = p.a * (k + 1);
	s[t] = p.a;
	__syncthreads();
	int other = s[(t + 1) % blockDim.x];
	__syncthreads();
	s[t] = other + acc[0] + acc[1] + acc[2] + p.b;
	__syncthreads();
	out[blockIdx.x * blockDim.x + t] = s[blockDim.x - 1 - t];
}
`

// regionCase is one kernel of regionKernels launched with one block shape: grid, shared
// memory and the size of out follow from the block.
type regionCase struct {
	entry string
	block hipsys.Dim3
}

func (c regionCase) launchShape(n int) (grid hipsys.Dim3, shared uint32, outLen int) {
	threads := int(c.block.Count())
	switch c.entry {
	case "matmul":
		g := uint32((n + int(c.block.X) - 1) / int(c.block.X))
		return hipsys.Dim3{X: g, Y: g, Z: 1}, uint32(2 * threads * 4), n * n
	case "hist":
		return hipsys.Dim3{X: 3, Y: 1, Z: 1}, 0, 64
	}
	return hipsys.Dim3{X: 3, Y: 1, Z: 1}, uint32(threads * 4), 3 * threads
}

// regionCases: every kernel over block sizes that include 1, non-powers of two and 1024.
func regionCases() []regionCase {
	var cases []regionCase
	for _, e := range []string{"reduce_tree", "scan_hs", "early", "branches", "hist", "locals", "shuffles", "reduce_warp", "warp_ifs", "warp_nested", "helper_sum"} {
		for _, x := range []uint32{1, 7, 32, 100, 256, 1000, 1024} {
			cases = append(cases, regionCase{e, dim(x, 1, 1)})
		}
	}
	for _, x := range []uint32{1, 5, 16, 32} {
		cases = append(cases, regionCase{"matmul", dim(x, x, 1)})
	}
	for _, b := range []hipsys.Dim3{dim(5, 3, 2), dim(16, 16, 1), dim(7, 1, 3), dim(8, 8, 16)} {
		cases = append(cases, regionCase{"cube", b})
	}
	return cases
}

// runRegionCase launches the case's kernel from m over a fixed input and returns out.
func runRegionCase(t *testing.T, m *jit.Module, c regionCase) []int32 {
	const n = 70
	grid, shared, outLen := c.launchShape(n)
	in := alloc[int32](t, max(n*n, 4096))
	for i := range in.s {
		in.s[i] = int32((i*7919)%1000 - 500)
	}
	out := alloc[int32](t, outLen)
	clear(out.s)
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
	launch(t, function(t, m, c.entry), grid, c.block, shared, &args)
	return append([]int32(nil), out.s...)
}

// Every transformed construct gives the fibers' answers: each kernel runs as regions and,
// with CUBEHIP_CPU_REGIONS=0, as fibers, over many block shapes.
func TestRegionsMatchFibers(t *testing.T) { regionsMatchFibers(t) }

// The same with 64-lane warps (AMD's wavefront), which $CUBEHIP_CPU_WARP_SIZE=64 selects.
func TestRegionsMatchFibersWarp64(t *testing.T) {
	if jit.WarpSize == 64 {
		t.Skip("TestRegionsMatchFibers already runs with 64 lanes")
	}
	jit.WarpSize = 64
	defer func() { jit.WarpSize = 32 }()
	regionsMatchFibers(t)
}

func regionsMatchFibers(t *testing.T) {
	for name, mode := range jit.EntryModes(regionKernels) {
		require.Equal(t, "regions", mode, name)
	}
	regions := load(t, regionKernels)
	t.Setenv("CUBEHIP_CPU_REGIONS", "0")
	fibers := load(t, regionKernels)
	for _, c := range regionCases() {
		t.Run(fmt.Sprintf("%s/%dx%dx%d", c.entry, c.block.X, c.block.Y, c.block.Z), func(t *testing.T) {
			want := runRegionCase(t, fibers, c)
			got := runRegionCase(t, regions, c)
			require.Equal(t, want, got)
		})
	}
}

// BenchmarkRegionsCompile: regionKernels (ten barrier kernels) compiled with an empty
// object cache, as regions and as fibers, and warm: a new Compiler over the disk cache a
// first compile filled (a new process's compile of a kernel it compiled before). Budgets:
// regions no slower to compile than fibers (the rewrite is a scan of the source; GCC
// compiles loops where it compiled a fiber entry), a warm compile under 5 ms.
func BenchmarkRegionsCompile(b *testing.B) {
	compile := func(b *testing.B, c *jit.Compiler) {
		img, log, err := c.Compile(regionKernels, "regions.hip", nil, nil)
		require.NoError(b, err, log)
		require.NotEmpty(b, img)
	}
	for _, mode := range []string{"regions", "fibers"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "fibers" {
				b.Setenv("CUBEHIP_CPU_REGIONS", "0")
			}
			compile(b, jit.NewCompiler(b.TempDir())) // the precompiled prelude for these flags
			for b.Loop() {
				compile(b, jit.NewCompiler(b.TempDir()))
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/compile")
		})
	}
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		compile(b, jit.NewCompiler(dir))
		for b.Loop() {
			compile(b, jit.NewCompiler(dir))
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/compile")
	})
}
