package faults_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
)

const liveSource = `extern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }`

// TestLiveCountsWhatPassedThrough: every create counts and every destroy uncounts, on
// success only; injected failures and refused destroys change nothing; a second
// wrapper over the same platform counts only its own.
func TestLiveCountsWhatPassedThrough(t *testing.T) {
	inner, err := cpu.Open()
	require.NoError(t, err)
	w, other := faults.Wrap(inner), faults.Wrap(inner)
	notMine, err := other.Malloc(8)
	require.NoError(t, err)
	defer other.Free(notMine)

	var want hipsys.LiveCounts
	check := func(what string) {
		t.Helper()
		assert.Equal(t, want, w.Live(), what)
	}
	check("a new wrapper counts nothing")

	st, err := w.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	ev, err := w.EventCreateWithFlags(0)
	require.NoError(t, err)
	d, err := w.Malloc(4096)
	require.NoError(t, err)
	zero, err := w.Malloc(0)
	require.NoError(t, err)
	assert.Zero(t, zero)
	h, err := w.HostMalloc(100, 0)
	require.NoError(t, err)
	prog, err := w.RTCCreateProgram(liveSource, "k.hip", nil)
	require.NoError(t, err)
	require.NoError(t, w.RTCCompileProgram(prog, nil))
	code, err := w.RTCGetCode(prog)
	require.NoError(t, err)
	m, err := w.ModuleLoadData(code)
	require.NoError(t, err)
	fn, err := w.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	require.NoError(t, w.StreamBeginCapture(st, hipsys.CaptureModeRelaxed))
	require.NoError(t, w.ModuleLaunchKernel(fn, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 4, Y: 1, Z: 1}, 0, st, new(hipsys.KernelArgs).Ptr(d)))
	g, err := w.StreamEndCapture(st)
	require.NoError(t, err)
	x, err := w.GraphInstantiate(g)
	require.NoError(t, err)
	want = hipsys.LiveCounts{Streams: 1, Events: 1, DeviceAllocs: 1, DeviceBytes: 4096, HostAllocs: 1, HostBytes: 100,
		Modules: 1, Graphs: 1, GraphExecs: 1, Programs: 1}
	check("one of each")

	// Injected failures create nothing; refused destroys destroy nothing.
	w.Fail("hipMalloc", hipsys.ErrorOutOfMemory)
	w.Fail("hipStreamCreateWithFlags", hipsys.ErrorOutOfMemory)
	w.Fail("hipEventDestroy", hipsys.ErrorInvalidHandle)
	_, err = w.Malloc(64)
	require.Error(t, err)
	_, err = w.StreamCreateWithFlags(0)
	require.Error(t, err)
	require.Error(t, w.EventDestroy(ev))
	w.Reset()
	require.Error(t, w.Free(d+8), "an interior pointer is refused by the platform")
	require.Error(t, w.GraphDestroy(0x1234))
	check("failures change nothing")

	require.NoError(t, w.GraphExecDestroy(x))
	require.NoError(t, w.GraphDestroy(g))
	require.NoError(t, w.ModuleUnload(m))
	require.NoError(t, w.RTCDestroyProgram(prog))
	require.NoError(t, w.HostFree(h))
	require.NoError(t, w.Free(d))
	require.NoError(t, w.EventDestroy(ev))
	require.NoError(t, w.StreamDestroy(st))
	want = hipsys.LiveCounts{}
	check("everything destroyed")
	assert.Equal(t, hipsys.LiveCounts{DeviceAllocs: 1, DeviceBytes: 8}, other.Live(), "the other wrapper counts its own")
}
