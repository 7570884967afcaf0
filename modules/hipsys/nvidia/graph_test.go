package nvidia

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const stepKernels = `#include <hip/hip_runtime.h>
extern "C" __global__ void add_one(unsigned int* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1u; }
extern "C" __global__ void mul_two(unsigned int* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2u; }
extern "C" __global__ void spin(unsigned int* out, unsigned long long iters) {
	unsigned int x = 1;
	for (unsigned long long i = 0; i < iters; ++i) x = x * 1664525u + 1013904223u;
	out[0] = x;
}
`

func TestStreamsAndEvents(t *testing.T) {
	p := device(t)
	m := compile(t, p, stepKernels)
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.StreamDestroy(st)) }()
	start, err := p.EventCreateWithFlags(hipsys.EventDefault)
	require.NoError(t, err)
	defer p.EventDestroy(start)
	stop, err := p.EventCreateWithFlags(hipsys.EventBlockingSync)
	require.NoError(t, err)
	defer p.EventDestroy(stop)
	out := devBuf(t, p, make([]byte, 4))

	require.NoError(t, p.EventRecord(start, st))
	args := new(hipsys.KernelArgs).Ptr(out).U64(50_000_000)
	require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "spin"), hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, st, args))
	require.NoError(t, p.EventRecord(stop, st))
	assert.ErrorIs(t, p.StreamQuery(st), hipsys.ErrorNotReady, "the spin is still running")
	assert.ErrorIs(t, p.EventQuery(stop), hipsys.ErrorNotReady)

	// A second stream waits for the first through the event.
	other, err := p.StreamCreateWithFlags(hipsys.StreamDefault)
	require.NoError(t, err)
	defer p.StreamDestroy(other)
	require.NoError(t, p.StreamWaitEvent(other, stop, 0))
	require.NoError(t, p.StreamSynchronize(other))
	assert.NoError(t, p.EventQuery(stop), "waited through the event")
	require.NoError(t, p.EventSynchronize(stop))
	ms, err := p.EventElapsedTime(start, stop)
	require.NoError(t, err)
	assert.Positive(t, ms)
	assert.NoError(t, p.StreamQuery(st))
}

func TestCaptureAndReplay(t *testing.T) {
	p := device(t)
	// CUDA ends a global or thread-local capture only on the thread that began it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	m := compile(t, p, stepKernels)
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(st)
	const n = 256
	x := devBuf(t, p, make([]byte, 4*n))
	args := new(hipsys.KernelArgs).Ptr(x).I32(n)
	grid, block := hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: n, Y: 1, Z: 1}

	cs, err := p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, cs)
	require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeThreadLocal))
	cs, err = p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusActive, cs)
	require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "add_one"), grid, block, 0, st, args))
	require.NoError(t, p.ModuleLaunchKernel(fn(t, p, m, "mul_two"), grid, block, 0, st, args))
	require.NoError(t, p.MemsetAsync(x+4*(n-1), 0, 4, st))
	g, err := p.StreamEndCapture(st)
	require.NoError(t, err)

	nodes, err := p.GraphGetNodes(g)
	require.NoError(t, err)
	require.Len(t, nodes, 3)
	kinds := map[hipsys.GraphNodeType]int{}
	for _, nd := range nodes {
		k, err := p.GraphNodeGetType(nd)
		require.NoError(t, err)
		kinds[k]++
	}
	assert.Equal(t, map[hipsys.GraphNodeType]int{hipsys.GraphNodeKernel: 2, hipsys.GraphNodeMemset: 1}, kinds)

	exec, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphUpload(exec, st))
	for range 5 {
		require.NoError(t, p.GraphLaunch(exec, st))
	}
	require.NoError(t, p.StreamSynchronize(st))
	out := readBack(t, p, x, 4*n)
	want := uint32(0)
	for range 5 {
		want = (want + 1) * 2
	}
	assert.Equal(t, want, binary.LittleEndian.Uint32(out[0:]), "five replays of (x+1)*2")
	assert.Equal(t, uint32(0), binary.LittleEndian.Uint32(out[4*(n-1):]), "the memset node ran last")

	require.NoError(t, p.GraphExecDestroy(exec))
	require.NoError(t, p.GraphDestroy(g))
	_, err = p.GraphNodeGetType(nodes[0])
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle, "nodes die with their graph")
	assert.ErrorIs(t, p.GraphLaunch(exec, st), hipsys.ErrorInvalidHandle)
	assert.ErrorIs(t, p.GraphDestroy(g), hipsys.ErrorInvalidHandle)
}

func TestCaptureInvalidatedBySync(t *testing.T) {
	p := device(t)
	// CUDA ends a global or thread-local capture only on the thread that began it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(st)
	x := devBuf(t, p, make([]byte, 64))
	require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeGlobal))
	require.NoError(t, p.MemsetAsync(x, 1, 64, st))
	assert.Error(t, p.StreamSynchronize(st), "a sync of a capturing stream is refused")
	_, err = p.StreamEndCapture(st)
	assert.ErrorIs(t, err, hipsys.ErrorStreamCaptureInvalidated)
	cs, err := p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, cs)
	assert.ErrorIs(t, p.StreamBeginCapture(0, hipsys.CaptureModeGlobal), hipsys.ErrorStreamCaptureUnsupported, "the null stream cannot capture")
}

func TestInvalidHandles(t *testing.T) {
	p := device(t)
	const bogus = 0xdead0
	st, err := p.StreamCreateWithFlags(0)
	require.NoError(t, err)
	require.NoError(t, p.StreamDestroy(st))
	ev, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	require.NoError(t, p.EventDestroy(ev))
	m := compile(t, p, stepKernels)
	f := fn(t, p, m, "add_one")

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"destroyed stream", p.StreamSynchronize(st)},
		{"stream destroyed twice", p.StreamDestroy(st)},
		{"invented stream", p.StreamQuery(bogus)},
		{"destroyed event", p.EventRecord(ev, 0)},
		{"event destroyed twice", p.EventDestroy(ev)},
		{"invented function", p.ModuleLaunchKernel(bogus, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, nil)},
		{"launch on invented stream", p.ModuleLaunchKernel(f, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, bogus, nil)},
		{"invented module", p.ModuleUnload(bogus)},
		{"invented graph", p.GraphDestroy(bogus)},
		{"invented exec", p.GraphUpload(bogus, 0)},
		{"capture on invented stream", p.StreamBeginCapture(bogus, 0)},
	} {
		assert.ErrorIs(t, tc.err, hipsys.ErrorInvalidHandle, tc.name)
	}
	_, err = p.EventElapsedTime(ev, ev)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	_, err = p.ModuleGetFunction(bogus, "add_one")
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)

	args := new(hipsys.KernelArgs).Ptr(0).I32(0)
	err = p.ModuleLaunchKernel(f, hipsys.Dim3{X: 0, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, args)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue, "a zero grid")
	err = p.ModuleLaunchKernel(f, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 4096, Y: 1, Z: 1}, 0, 0, args)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue, "a block over 1024 threads")

	// Unloading a module invalidates its functions.
	m2 := compile(t, p, stepKernels)
	f2 := fn(t, p, m2, "mul_two")
	require.NoError(t, p.ModuleUnload(m2))
	assert.ErrorIs(t, p.ModuleLaunchKernel(f2, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, args), hipsys.ErrorInvalidHandle)
}
