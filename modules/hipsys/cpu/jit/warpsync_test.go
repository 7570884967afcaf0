package jit_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A block reduction whose last warp relies on lockstep (warpReduce on a volatile pointer,
// the classic unrolled form) is refused when compiled, naming the construct; written with
// __syncwarp between each step's read and write, as CUDA requires since Volta, it runs
// and gives the block's sum.
func TestWarpSynchronousReduction(t *testing.T) {
	const prefix = `#include <hip/hip_runtime.h>
__device__ void warpReduce(volatile int* s, unsigned tid) {
`
	const suffix = `}
extern "C" __global__ void reduce(const int* in, int* out) {
	__shared__ int sdata[256];
	const unsigned tid = threadIdx.x;
	sdata[tid] = in[blockIdx.x * 256 + tid];
	__syncthreads();
	for (unsigned s = 128; s > 32; s >>= 1) {
		if (tid < s) sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid < 32) warpReduce(sdata, tid);
	if (tid == 0) out[blockIdx.x] = sdata[0];
}
`
	lockstep := prefix + `	s[tid] += s[tid + 32];
	s[tid] += s[tid + 16];
	s[tid] += s[tid + 8];
	s[tid] += s[tid + 4];
	s[tid] += s[tid + 2];
	s[tid] += s[tid + 1];
` + suffix
	_, log, err := compiler().Compile(lockstep, "reduce.hip", nil, nil)
	var he *hipsys.Error
	require.True(t, errors.As(err, &he), "refused: %v", err)
	assert.Equal(t, hipsys.RTCErrorCompilation, he.RTCStatus)
	assert.Contains(t, log, "reduce.hip:3: error: implicit warp-synchronous code: s[tid+32]")
	assert.Contains(t, he.Detail, "__syncwarp()")

	synced := prefix + `	for (unsigned o = 32; o > 0; o >>= 1) {
		const int v = s[tid + o];
		__syncwarp();
		s[tid] += v;
		__syncwarp();
	}
` + suffix
	const blocks = 3
	in, out := alloc[int32](t, blocks*256), alloc[int32](t, blocks)
	want := make([]int32, blocks)
	for i := range in.s {
		in.s[i] = int32(i%97) - 40
		want[i/256] += in.s[i]
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev())
	launch(t, function(t, load(t, synced), "reduce"), dim(blocks, 1, 1), dim(256, 1, 1), 0, &args)
	assert.Equal(t, want, out.s)
}
