package server_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A reduction in one cooperative launch: each block sums its share into a partial, the
// grid's barrier, then block 0 sums the partials.
const coopSource = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void coop_sum(const int* in, int* partial, int* out, int n) {
	cg::grid_group grid = cg::this_grid();
	__shared__ int s[128];
	int v = 0;
	for (unsigned i = grid.thread_rank(); i < (unsigned)n; i += grid.size()) v += in[i];
	s[threadIdx.x] = v;
	__syncthreads();
	for (unsigned k = 64; k > 0; k /= 2) {
		if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
	grid.sync();
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		int t = 0;
		for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
		out[0] = t;
	}
}
`

var coopBlock = server.Block(hipsys.Dim3{X: 128})

// The grid is sized as real code sizes it (the occupancy query times the multiprocessors);
// one block more is refused at the call, naming the limit, and queues nothing.
func TestCooperativeCall(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	k := server.DefineKernel(coopSource, "coop_sum", coopBlock, server.Cooperative())
	require.True(t, k.Cooperative())
	per, err := d.MaxActiveBlocksPerMultiprocessor(k, 128, 0)
	require.NoError(t, err)
	require.Positive(t, per)
	blocks := per * d.Props().MultiProcessorCount

	const n = 50001
	in := make([]int32, n)
	var want int32
	for i := range in {
		in[i] = int32(i%97) - 40
		want += in[i]
	}
	x, err := server.UploadSlice(d.Stream, in)
	require.NoError(t, err)
	partial, err := server.UploadSlice(d.Stream, make([]int32, blocks+1))
	require.NoError(t, err)
	out, err := server.UploadSlice(d.Stream, []int32{-1})
	require.NoError(t, err)
	err = d.Call(k, server.Dim3{X: uint32(blocks)}, x, partial, out, n)
	if errors.Is(err, hipsys.ErrorNotSupported) {
		t.Skipf("no cooperative launch on %s: %v", d.Platform(), err)
	}
	require.NoError(t, err)
	got, err := server.ReadSlice[int32](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []int32{want}, got)

	require.NoError(t, server.WriteSlice(d.Stream, out, []int32{-1}))
	err = d.Call(k, server.Dim3{X: uint32(blocks + 1)}, x, partial, out, n)
	require.ErrorIs(t, err, hipsys.ErrorCooperativeLaunchTooLarge)
	assert.ErrorContains(t, err, "over the "+strconv.Itoa(blocks)+" the device holds at once")
	got, err = server.ReadSlice[int32](d.Stream, out)
	require.NoError(t, err, "a refused launch changes no buffer")
	assert.Equal(t, []int32{-1}, got)
	require.NoError(t, d.Stream.Sync())
}

// On the cpu device, this_grid().sync() in a kernel launched without Cooperative fails
// that launch, naming the construct: its outputs carry the failure and Sync reports it.
func TestGridSyncWithoutCooperativeOnCPU(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	if d.Platform() != "cpu" {
		t.Skipf("a grid barrier in a launch that is not cooperative is undefined on %s", d.Platform())
	}
	k := server.DefineKernel(coopSource, "coop_sum", coopBlock)
	x, err := server.UploadSlice(d.Stream, []int32{1, 2, 3})
	require.NoError(t, err)
	partial, err := server.UploadSlice(d.Stream, make([]int32, 4))
	require.NoError(t, err)
	out, err := server.UploadSlice(d.Stream, []int32{-1})
	require.NoError(t, err)
	require.NoError(t, d.Call(k, server.Dim3{X: 4}, x, partial, out, 3))
	_, err = server.ReadSlice[int32](d.Stream, out)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.ErrorContains(t, err, "this_grid().sync()")
	assert.ErrorContains(t, err, "not cooperative")
	assert.Error(t, d.Stream.Sync())
}
