package cpu

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

const gridSyncSource = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
// Each block writes its slot, the grid's barrier, then block 0 sums every slot.
extern "C" __global__ void sum_slots(int* slots, int* out) {
	if (threadIdx.x == 0) slots[blockIdx.x] = blockIdx.x + 1;
	cg::this_grid().sync();
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		int t = 0;
		for (unsigned b = 0; b < gridDim.x; b++) t += slots[b];
		out[0] = t;
	}
}
`

func loadGridSync(t *testing.T, p *Platform) hipsys.Function {
	t.Helper()
	prog, err := p.RTCCreateProgram(gridSyncSource, "grid.hip", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.RTCDestroyProgram(prog)) }()
	require.NoError(t, p.RTCCompileProgram(prog, nil))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.ModuleUnload(mod)) })
	fn, err := p.ModuleGetFunction(mod, "sum_slots")
	require.NoError(t, err)
	return fn
}

func readI32(t *testing.T, p *Platform, d hipsys.DevicePtr) int32 {
	t.Helper()
	b := make([]byte, 4)
	require.NoError(t, p.MemcpyDtoH(b, d))
	return int32(binary.LittleEndian.Uint32(b))
}

func TestCooperativeLaunchOnAStream(t *testing.T) {
	p := newTest(t)
	fn := loadGridSync(t, p)
	const block = 64
	per, err := p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, block, 0)
	require.NoError(t, err)
	assert.Equal(t, jit.MaxActiveBlocksPerMultiprocessor(block, 0), per)
	props, err := p.GetDeviceProperties(0)
	require.NoError(t, err)
	blocks := uint32(per * props.MultiProcessorCount)
	slots, err := p.Malloc(4 * uint64(blocks+1))
	require.NoError(t, err)
	defer p.Free(slots)
	out, err := p.Malloc(4)
	require.NoError(t, err)
	defer p.Free(out)
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(s)

	var args hipsys.KernelArgs
	args.Ptr(slots).Ptr(out)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, p.ModuleLaunchCooperativeKernel(fn, hipsys.Dim3{X: blocks, Y: 1, Z: 1}, hipsys.Dim3{X: block, Y: 1, Z: 1}, 0, s, &args))
	require.NoError(t, p.StreamSynchronize(s))
	assert.Equal(t, int32(blocks*(blocks+1)/2), readI32(t, p, out))

	// One block more than the device holds at once: refused at the call, nothing queued.
	require.NoError(t, p.MemsetAsync(out, 0, 4, s))
	err = p.ModuleLaunchCooperativeKernel(fn, hipsys.Dim3{X: blocks + 1, Y: 1, Z: 1}, hipsys.Dim3{X: block, Y: 1, Z: 1}, 0, s, &args)
	requireStatus(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorCooperativeLaunchTooLarge)
	assert.ErrorContains(t, err, "the device holds at once")
	require.NoError(t, p.StreamSynchronize(s))
	assert.Zero(t, readI32(t, p, out))

	// The launch's other checks name the cooperative call.
	err = p.ModuleLaunchCooperativeKernel(fn, one, hipsys.Dim3{}, 0, s, &args)
	requireStatus(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorInvalidConfiguration)
	err = p.ModuleLaunchCooperativeKernel(fn, one, one, 0, s, nil)
	requireStatus(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorInvalidValue)
	err = p.ModuleLaunchCooperativeKernel(0x5eed, one, one, 0, s, nil)
	requireStatus(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorInvalidHandle)
	_, err = p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(0x5eed, 64, 0)
	requireStatus(t, err, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", hipsys.ErrorInvalidHandle)

	// Captured in a graph, the launch stays cooperative when the graph replays.
	require.NoError(t, p.StreamBeginCapture(s, hipsys.CaptureModeThreadLocal))
	require.NoError(t, p.ModuleLaunchCooperativeKernel(fn, hipsys.Dim3{X: 3, Y: 1, Z: 1}, hipsys.Dim3{X: block, Y: 1, Z: 1}, 0, s, &args))
	g, err := p.StreamEndCapture(s)
	require.NoError(t, err)
	defer p.GraphDestroy(g)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	defer p.GraphExecDestroy(x)
	require.NoError(t, p.GraphLaunch(x, s))
	require.NoError(t, p.StreamSynchronize(s))
	assert.Equal(t, int32(6), readI32(t, p, out))
}

// this_grid().sync() in a launch that is not cooperative: the stream's synchronization
// reports the launch failure, naming the construct, instead of hanging.
func TestGridSyncNeedsACooperativeLaunch(t *testing.T) {
	p := newTest(t)
	fn := loadGridSync(t, p)
	slots, err := p.Malloc(4 * 8)
	require.NoError(t, err)
	defer p.Free(slots)
	out, err := p.Malloc(4)
	require.NoError(t, err)
	defer p.Free(out)
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(s)
	var args hipsys.KernelArgs
	args.Ptr(slots).Ptr(out)
	require.NoError(t, p.ModuleLaunchKernel(fn, hipsys.Dim3{X: 8, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}, 0, s, &args))
	err = p.StreamSynchronize(s)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.ErrorContains(t, err, "kernel sum_slots called this_grid().sync()")
	assert.ErrorContains(t, err, "not cooperative")
}
