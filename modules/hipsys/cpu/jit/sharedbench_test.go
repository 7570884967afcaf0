package jit

import (
	"slices"
	"testing"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

// benchSharedKernels are shared-memory kernels as regions (the jit's default for them):
// a tree reduction over a static array, the same over the dynamic buffer, and a tiled
// matrix product with two static tiles.
const benchSharedKernels = `
extern "C" __global__ void reduce_s(const float* in, float* out) {
	__shared__ float s[256];
	int t = threadIdx.x;
	s[t] = in[blockIdx.x * 256 + t];
	__syncthreads();
	for (int stride = 128; stride > 0; stride >>= 1) {
		if (t < stride) s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void reduce_d(const float* in, float* out) {
	extern __shared__ float s[];
	int t = threadIdx.x;
	s[t] = in[blockIdx.x * 256 + t];
	__syncthreads();
	for (int stride = 128; stride > 0; stride >>= 1) {
		if (t < stride) s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = s[0];
}
#define TILE 16
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n) {
	__shared__ float ta[TILE][TILE], tb[TILE][TILE];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
	float acc = 0.0f;
	for (int k0 = 0; k0 < n; k0 += TILE) {
		ta[ty][tx] = a[row * n + k0 + tx];
		tb[ty][tx] = b[(k0 + ty) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
		__syncthreads();
	}
	c[row * n + col] = acc;
}
`

// benchShared times launches of one of benchSharedKernels; kernel-µs is the median.
func benchShared(b *testing.B, name string, grid, block hipsys.Dim3, shared uint32, args *hipsys.KernelArgs) {
	f := benchFunction(b, benchSharedKernels, name)
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := f.Launch(grid, block, shared, args.Buffer(), args.Offsets()); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "kernel-µs")
}

// BenchmarkSharedReduce: 4096 blocks of 256 threads, a tree reduction over a static
// __shared__ array (Static) or the dynamic buffer (Dynamic), as regions.
func BenchmarkSharedReduce(b *testing.B) {
	const blocks = 4096
	in, out := hostmem.Alloc(blocks*256*4), hostmem.Alloc(blocks*4)
	defer hostmem.Free(in)
	defer hostmem.Free(out)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(in)).Ptr(hipsys.DevicePtr(out))
	grid, block := hipsys.Dim3{X: blocks, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}
	b.Run("Static", func(b *testing.B) { benchShared(b, "reduce_s", grid, block, 0, &args) })
	b.Run("Dynamic", func(b *testing.B) { benchShared(b, "reduce_d", grid, block, 256*4, &args) })
}

// BenchmarkSharedMatmul: a 256×256 product with 16×16 shared tiles, as regions.
func BenchmarkSharedMatmul(b *testing.B) {
	const n = 256
	a, bb, c := hostmem.Alloc(n*n*4), hostmem.Alloc(n*n*4), hostmem.Alloc(n*n*4)
	defer hostmem.Free(a)
	defer hostmem.Free(bb)
	defer hostmem.Free(c)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(a)).Ptr(hipsys.DevicePtr(bb)).Ptr(hipsys.DevicePtr(c)).I32(n)
	benchShared(b, "matmul", hipsys.Dim3{X: n / 16, Y: n / 16, Z: 1}, hipsys.Dim3{X: 16, Y: 16, Z: 1}, 0, &args)
}
