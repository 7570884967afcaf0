package amd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Every call that takes a handle checks it first: ROCm would dereference these.
func TestInventedHandlesAreInvalidHandle(t *testing.T) {
	p := fakePlatform(t)
	const junk = 0x5eed0000
	tests := []struct {
		call string
		do   func() error
	}{
		{"hipStreamQuery", func() error { return p.StreamQuery(junk) }},
		{"hipStreamSynchronize", func() error { return p.StreamSynchronize(junk) }},
		{"hipStreamDestroy", func() error { return p.StreamDestroy(junk) }},
		{"hipStreamDestroy", func() error { return p.StreamDestroy(hipsys.NullStream) }},
		{"hipStreamWaitEvent", func() error { return p.StreamWaitEvent(0, junk, 0) }},
		{"hipEventRecord", func() error { return p.EventRecord(junk, 0) }},
		{"hipEventQuery", func() error { return p.EventQuery(junk) }},
		{"hipEventSynchronize", func() error { return p.EventSynchronize(0) }},
		{"hipEventDestroy", func() error { return p.EventDestroy(junk) }},
		{"hipEventElapsedTime", func() error { _, err := p.EventElapsedTime(junk, junk); return err }},
		{"hipMemsetD8Async", func() error { return p.MemsetAsync(0, 0, 0, junk) }},
		{"hipModuleGetFunction", func() error { _, err := p.ModuleGetFunction(junk, "k"); return err }},
		{"hipModuleLaunchKernel", func() error {
			return p.ModuleLaunchKernel(junk, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, 0, nil)
		}},
		{"hipModuleUnload", func() error { return p.ModuleUnload(junk) }},
		{"hipStreamBeginCapture", func() error { return p.StreamBeginCapture(junk, 0) }},
		{"hipGraphGetNodes", func() error { _, err := p.GraphGetNodes(junk); return err }},
		{"hipGraphNodeGetType", func() error { _, err := p.GraphNodeGetType(junk); return err }},
		{"hipGraphInstantiate", func() error { _, err := p.GraphInstantiate(junk); return err }},
		{"hipGraphUpload", func() error { return p.GraphUpload(junk, 0) }},
		{"hipGraphLaunch", func() error { return p.GraphLaunch(junk, 0) }},
		{"hipGraphExecDestroy", func() error { return p.GraphExecDestroy(junk) }},
		{"hipGraphDestroy", func() error { return p.GraphDestroy(junk) }},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			var he *hipsys.Error
			require.ErrorAs(t, tc.do(), &he)
			assert.Equal(t, tc.call, he.Call)
			assert.Equal(t, hipsys.ErrorInvalidHandle, he.Status)
			assert.Equal(t, "amd", he.Platform)
		})
	}
}

func TestDestroyedHandlesStayInvalid(t *testing.T) {
	p := fakePlatform(t)
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	require.NoError(t, p.StreamSynchronize(s))
	require.NoError(t, p.StreamDestroy(s))
	assert.ErrorIs(t, p.StreamDestroy(s), hipsys.ErrorInvalidHandle)
	assert.ErrorIs(t, p.StreamQuery(s), hipsys.ErrorInvalidHandle)

	e, err := p.EventCreateWithFlags(hipsys.EventDefault)
	require.NoError(t, err)
	require.NoError(t, p.EventRecord(e, 0))
	assert.ErrorIs(t, p.EventQuery(e), hipsys.ErrorNotReady)
	ms, err := p.EventElapsedTime(e, e)
	require.NoError(t, err)
	assert.Equal(t, float32(1.5), ms)
	require.NoError(t, p.EventDestroy(e))
	assert.ErrorIs(t, p.EventSynchronize(e), hipsys.ErrorInvalidHandle)
}

func TestLaunchPassesArgumentsAndAllocatesNothing(t *testing.T) {
	p := fakePlatform(t)
	m, err := p.ModuleLoadData(fakeCodeObject())
	require.NoError(t, err)
	_, err = p.ModuleGetFunction(m, "missing")
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	fn, err := p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	out, err := p.Malloc(4)
	require.NoError(t, err)
	defer p.Free(out)

	// The fake kernel k(int* out, int v) stores v through kernelParams.
	var args hipsys.KernelArgs
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, p.ModuleLaunchKernel(fn, one, one, 0, 0, args.Reset().Ptr(out).I32(-42)))
	got := make([]byte, 4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, []byte{0xd6, 0xff, 0xff, 0xff}, got)

	err = p.ModuleLaunchKernel(fn, one, hipsys.Dim3{}, 0, 0, args.Reset().Ptr(out).I32(1))
	assert.ErrorIs(t, err, hipsys.ErrorInvalidConfiguration)

	ev, err := p.EventCreateWithFlags(hipsys.EventDefault)
	require.NoError(t, err)
	defer p.EventDestroy(ev)
	allocs := testing.AllocsPerRun(100, func() {
		_ = p.ModuleLaunchKernel(fn, one, one, 0, 0, args.Reset().Ptr(out).I32(7))
		_ = p.EventQuery(ev) // the fake's events never complete: polling must not allocate
	})
	assert.Zero(t, allocs)

	require.NoError(t, p.ModuleUnload(m))
	assert.ErrorIs(t, p.ModuleLaunchKernel(fn, one, one, 0, 0, nil), hipsys.ErrorInvalidHandle,
		"unloading a module retires its functions")
}

func TestModuleLoadDataRejectsWhatIsNotAnAMDGPUCodeObject(t *testing.T) {
	p := fakePlatform(t)
	x86 := fakeCodeObject()
	x86[18] = 62 // EM_X86_64
	for name, img := range map[string][]byte{
		"empty": nil, "text": []byte("extern \"C\" __global__ void k() {}"), "x86-64 ELF": x86,
	} {
		_, err := p.ModuleLoadData(img)
		assert.ErrorIs(t, err, hipsys.ErrorInvalidImage, name)
	}
}

func TestGraphLifecycle(t *testing.T) {
	p := fakePlatform(t)
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(s)
	require.NoError(t, p.StreamBeginCapture(s, hipsys.CaptureModeGlobal))
	st, err := p.StreamIsCapturing(s)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, st) // what the fake says
	g, err := p.StreamEndCapture(s)
	require.NoError(t, err)
	nodes, err := p.GraphGetNodes(g)
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	typ, err := p.GraphNodeGetType(nodes[0])
	require.NoError(t, err)
	assert.Equal(t, hipsys.GraphNodeKernel, typ)
	exec, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	assert.NoError(t, p.GraphUpload(exec, s), "without hipGraphUpload (ROCm 5.2) upload is a no-op")
	assert.NoError(t, p.GraphLaunch(exec, s))
	require.NoError(t, p.GraphDestroy(g))
	_, err = p.GraphNodeGetType(nodes[0])
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle, "destroying a graph retires its nodes")
	assert.NoError(t, p.GraphLaunch(exec, s), "an instantiated graph outlives its graph")
	require.NoError(t, p.GraphExecDestroy(exec))
}

// fakeCodeObject is the smallest thing that passes for an AMDGPU ELF at the door.
func fakeCodeObject() []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF\x02\x01\x01")
	b[18] = emAMDGPU
	return b
}
