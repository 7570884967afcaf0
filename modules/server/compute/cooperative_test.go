package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Each block writes its slot, the grid's barrier, then block 0 sums every slot into out.
const gridSumSource = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void sum_slots(float* slots, float* out) {
	if (threadIdx.x == 0) slots[blockIdx.x] = (float)(blockIdx.x + 1);
	cg::this_grid().sync();
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		float t = 0;
		for (unsigned b = 0; b < gridDim.x; b++) t += slots[b];
		out[0] = t;
	}
}
`

func gridSum() *compute.Kernel {
	k := compute.NewKernel(gridSumSource, "sum_slots", hipsys.Dim3{X: 32, Y: 1, Z: 1}, []compute.Access{compute.Write, compute.Write})
	k.Cooperative = true
	return k
}

// A cooperative kernel is launched with hipModuleLaunchCooperativeKernel on the fast path
// and the full one, never through the launch queue (which issues plain launches only),
// and its failures are carried as any launch's.
func TestCooperativeLaunch(t *testing.T) {
	e := newEnvWith(t, func(p hipsys.Platform) hipsys.Platform { return p }, compute.Config{LaunchQueue: true})
	k := gridSum()
	const blocks = 4
	for _, fast := range []bool{true, false} {
		slots, out := e.empty(0, blocks), e.empty(0, 1)
		if !fast {
			e.srv.Streams().Taint(assert.AnError, e.empty(0, 1)) // a failure elsewhere: the full path
		}
		plain, coop := e.f.Calls("hipModuleLaunchKernel"), e.f.Calls("hipModuleLaunchCooperativeKernel")
		require.NoError(t, e.srv.Launch(k, compute.Static(blocks, 1, 1), &compute.Args{Buffers: []compute.Binding{slots, out}}, 0, compute.Execute))
		assert.Equal(t, []float32{10}, e.mustRead(0, out, 1), "fast path %v", fast)
		assert.Equal(t, coop+1, e.f.Calls("hipModuleLaunchCooperativeKernel"))
		assert.Equal(t, plain, e.f.Calls("hipModuleLaunchKernel"), "neither queued nor launched plainly")
	}

	// A refused cooperative launch: its outputs carry the failure, as a plain launch's do.
	slots, out := e.empty(0, blocks), e.empty(0, 1)
	require.True(t, e.f.FailNext("hipModuleLaunchCooperativeKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, e.srv.Launch(k, compute.Static(blocks, 1, 1), &compute.Args{Buffers: []compute.Binding{slots, out}}, 0, compute.Execute))
	_, err := e.read(0, out, 1)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.ErrorContains(t, err, "hipModuleLaunchCooperativeKernel")
	_ = e.srv.TakeFailure(0)

	// Over the device's limit: the platform refuses it, and the outputs carry that.
	limit := jit.CooperativeLimit(k.Block, 0)
	slots, out = e.empty(0, limit+1), e.empty(0, 1)
	require.NoError(t, e.srv.Launch(k, compute.Static(uint32(limit+1), 1, 1), &compute.Args{Buffers: []compute.Binding{slots, out}}, 0, compute.Execute))
	_, err = e.read(0, out, 1)
	assert.ErrorIs(t, err, hipsys.ErrorCooperativeLaunchTooLarge)
	_ = e.srv.TakeFailure(0)
}

func TestMaxActiveBlocksPerMultiprocessor(t *testing.T) {
	e := newEnv(t)
	n, err := e.srv.MaxActiveBlocksPerMultiprocessor(gridSum(), 64, 0)
	require.NoError(t, err)
	assert.Equal(t, jit.MaxActiveBlocksPerMultiprocessor(64, 0), n)
	assert.True(t, e.srv.Loaded(gridSum()), "the query compiled and loaded the kernel")
	_, err = e.srv.MaxActiveBlocksPerMultiprocessor(compute.NewKernel("not C++", "k", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil), 64, 0)
	assert.ErrorIs(t, err, compute.ErrCompilation)
}
