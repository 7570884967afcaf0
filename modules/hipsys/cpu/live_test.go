package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// TestLiveCounts: each kind of object counts while it lives, with the sizes asked of
// the allocations, and stops counting when it is destroyed; the null stream, failed
// calls and a Malloc(0) count nothing.
func TestLiveCounts(t *testing.T) {
	p := newTest(t)
	assert.Equal(t, hipsys.LiveCounts{}, p.Live())
	require.NoError(t, p.StreamSynchronize(hipsys.NullStream), "the null stream is the device's own")

	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	ev, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	d1, err := p.Malloc(100)
	require.NoError(t, err)
	d2, err := p.Malloc(2 << 20) // an mmap'ed block
	require.NoError(t, err)
	none, err := p.Malloc(0)
	require.NoError(t, err)
	assert.Zero(t, none)
	h, err := p.HostMalloc(10, 0)
	require.NoError(t, err)
	_, err = p.Malloc(1 << 62)
	require.Error(t, err)
	_, err = p.StreamCreateWithFlags(7)
	require.Error(t, err)

	prog, err := p.RTCCreateProgram(`extern "C" __global__ void k() {}`, "k.hip", nil)
	require.NoError(t, err)
	require.NoError(t, p.RTCCompileProgram(prog, nil))
	code, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	fn, err := p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeRelaxed))
	require.NoError(t, p.ModuleLaunchKernel(fn, one, one, 0, st, nil))
	g, err := p.StreamEndCapture(st)
	require.NoError(t, err)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)

	assert.Equal(t, hipsys.LiveCounts{Streams: 1, Events: 1, DeviceAllocs: 2, DeviceBytes: 100 + 2<<20, HostAllocs: 1, HostBytes: 10,
		Modules: 1, Graphs: 1, GraphExecs: 1, Programs: 1}, p.Live())

	require.NoError(t, p.GraphDestroy(g))
	assert.Equal(t, 0, p.Live().Graphs)
	assert.Equal(t, 1, p.Live().GraphExecs, "an executable graph outlives its graph")
	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.ModuleUnload(m))
	require.NoError(t, p.RTCDestroyProgram(prog))
	require.NoError(t, p.Free(d1))
	assert.Equal(t, uint64(2<<20), p.Live().DeviceBytes)
	require.NoError(t, p.Free(d2))
	require.NoError(t, p.HostFree(h))
	require.NoError(t, p.EventDestroy(ev))
	require.NoError(t, p.StreamDestroy(st))
	assert.Equal(t, hipsys.LiveCounts{}, p.Live())
}
