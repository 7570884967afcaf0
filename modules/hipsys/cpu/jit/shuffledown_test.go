package jit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// shuffleDownKernels shuffle in each of the ways regions run. A shuffle down's region
// loop is split where its source passes the block's end (cubehip_regions.h): the lanes
// before run without the check, the last ones keep their own values.
const shuffleDownKernels = `
extern "C" __global__ void down(const int* in, int* out, int n) {
	__shared__ int partial[1024 / 16];
	int t = threadIdx.x;
	int v = in[(blockIdx.x * blockDim.x + t) % n];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	if (t % warpSize == 0) partial[t / warpSize] = v;
	__syncthreads();
	int u = in[t % n] * 3;
	u += __shfl_down(u, 5, 8);
	u -= __shfl_down(u, 70);
	u ^= __shfl_xor(u, 3, 16);
	u -= __shfl(u, t + 7);
	u += __shfl_up(u, 2);
	if (t % 3 == 1) {
		u += __shfl_down(u, 1);
		u += __shfl_xor(u, 6);
	}
	out[blockIdx.x * blockDim.x + t] = u + partial[t / warpSize];
}
`

// Blocks of whole warps (32, 64, 96, 256 threads) and others (1, 31, 33, 100): both
// parts of the split loops give the fibers' answers, at 32 and 64 lanes.
func TestShuffleDownSplitMatchesFibers(t *testing.T) {
	require.Equal(t, map[string]string{"down": "regions"}, jit.EntryModes(shuffleDownKernels))
	for _, w := range []int{32, 64} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			saved := jit.WarpSize
			jit.WarpSize = w
			defer func() { jit.WarpSize = saved }()
			jit.RequireRegionsCompile(t, shuffleDownKernels)
			regions := function(t, load(t, shuffleDownKernels), "down")
			t.Setenv("CUBEHIP_CPU_REGIONS", "0")
			fibers := function(t, load(t, shuffleDownKernels), "down")
			const n, blocks = 333, 3
			in := alloc[int32](t, n)
			for i := range in.s {
				in.s[i] = int32((i*7919)%1000 - 500)
			}
			for _, x := range []uint32{32, 64, 96, 256, 1, 31, 33, 100} {
				run := func(f *jit.Function) []int32 {
					out := alloc[int32](t, blocks*int(x))
					var args hipsys.KernelArgs
					args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
					launch(t, f, dim(blocks, 1, 1), dim(x, 1, 1), 0, &args)
					return append([]int32(nil), out.s...)
				}
				require.Equal(t, run(fibers), run(regions), "block of %d", x)
			}
		})
	}
}
