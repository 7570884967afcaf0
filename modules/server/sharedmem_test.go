package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// windowSource stages a block's whole slice of the input in dynamic shared memory and
// writes it back reversed: every byte the launch asked for is written and read.
const windowSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void shared_window(const float* in, float* out, unsigned words) {
    extern __shared__ float window[];
    const float* src = in + (size_t)blockIdx.x * words;
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) window[i] = src[i];
    __syncthreads();
    float* dst = out + (size_t)blockIdx.x * words;
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) dst[i] = window[words - 1 - i];
}
`

// A kernel asking for more dynamic shared memory than SharedMemPerBlock, up to the
// device's opt-in limit, is launched through the Device and gets it (on NVIDIA the
// platform opts the kernel in past 48 KiB); one byte more is refused at the call.
func TestLargeDynamicSharedMemory(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	const shared = 100 << 10
	limit := max(d.Props().SharedMemPerBlockOptin, d.Props().SharedMemPerBlock)
	if limit < shared {
		t.Skipf("%s gives a block at most %d bytes of shared memory", d.Props().Name, limit)
	}
	const words, blocks = shared / 4, 3
	block := server.Block(hipsys.Dim3{X: 256, Y: 1, Z: 1})
	k := server.DefineKernel(windowSource, "shared_window", block, server.IO(server.Read, server.Write), server.SharedMem(shared))
	in := make([]float32, words*blocks)
	for i := range in {
		in[i] = float32(i)
	}
	x, out := upload(t, d.Stream, in...), alloc(t, d.Stream, 4*words*blocks)
	require.NoError(t, d.Stream.Call(k, hipsys.Dim3{X: blocks, Y: 1, Z: 1}, x.Arg(), out.Arg(), server.U32(words)))
	got := readFloats(t, d.Stream, out)
	for b := range blocks {
		for i := range words {
			require.Equal(t, in[b*words+words-1-i], got[b*words+i], "block %d, element %d", b, i)
		}
	}

	over := server.DefineKernel(windowSource, "shared_window", block, server.IO(server.Read, server.Write),
		server.SharedMem(uint32(limit)+1))
	err := d.Stream.Call(over, hipsys.Dim3{X: 1, Y: 1, Z: 1}, x.Arg(), out.Arg(), server.U32(1))
	require.ErrorIs(t, err, server.ErrInvalidArgument)
	require.ErrorContains(t, err, "SharedMemPerBlockOptin")
}
