package jit

import (
	"slices"
	"testing"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit/internal/hostmem"
)

// benchWarpRegionsKernel is `cubehip bench`'s warp-shuffle reduction (cmd/cubehip,
// bench_cpu.go), which runs as regions: five shuffle regions over the block's 256 lanes,
// then one barrier.
const benchWarpRegionsKernel = `
extern "C" __global__ void reduce_warp(const float* in, float* out, int n) {
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
}
`

// BenchmarkWarpShuffleRegions: the warp-shuffle reduction of 1M floats (4096 blocks of
// 256 threads) as regions, the kernel alone: kernel-µs is the median launch. Run it on
// one core (taskset -c 1) for the per-thread cost the core count then divides.
func BenchmarkWarpShuffleRegions(b *testing.B) {
	const blocks, n = 4096, 4096 * 256
	f := benchFunction(b, benchWarpRegionsKernel, "reduce_warp")
	in, out := hostmem.Alloc(n*4), hostmem.Alloc(blocks*4)
	defer hostmem.Free(in)
	defer hostmem.Free(out)
	var args hipsys.KernelArgs
	args.Ptr(hipsys.DevicePtr(in)).Ptr(hipsys.DevicePtr(out)).I32(n)
	grid, block := hipsys.Dim3{X: blocks, Y: 1, Z: 1}, hipsys.Dim3{X: 256, Y: 1, Z: 1}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := f.Launch(grid, block, 0, args.Buffer(), args.Offsets()); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "kernel-µs")
}
