package conformance

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// asyncFailures holds the cpu platform to delivering a failure of queued work the way
// a GPU does: at the next synchronization of any kind that waits for it, an event's
// included, and not at one that waits only for earlier work. The failure is a real one
// the public API can cause: an executable graph still launches a kernel whose module
// was unloaded, so the kernel cannot run when the stream reaches it. (On a GPU that is
// undefined behaviour, which is why only the cpu platform is asked.)
func (s *suite) asyncFailures(t *testing.T) {
	p := s.p
	k := kernel("vector")
	m, err := p.ModuleLoadData(s.compile(t, k.Source, "vector.hip", nil, []string{"-O3"}))
	require.NoError(t, err)
	fn, err := p.ModuleGetFunction(m, "vector_add")
	require.NoError(t, err)

	const n = 64
	a, b, c := s.upload(t, f32Bytes(ramp(n, 1, 0))), s.upload(t, f32Bytes(ramp(n, 1, 0))), s.zeros(t, 4*n)
	st := s.stream(t, hipsys.StreamNonBlocking)
	other := s.stream(t, hipsys.StreamNonBlocking)
	require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeGlobal))
	s.launch(t, fn, dim(1, 1), dim(n, 1), 0, st, new(hipsys.KernelArgs).Ptr(a).Ptr(b).Ptr(c).I32(n))
	g, err := p.StreamEndCapture(st)
	require.NoError(t, err)
	exec, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.GraphExecDestroy(exec) })
	require.NoError(t, p.GraphDestroy(g))
	require.NoError(t, p.ModuleUnload(m))

	before, after, unrelated := s.event(t, hipsys.EventDisableTiming), s.event(t, hipsys.EventDisableTiming), s.event(t, hipsys.EventDisableTiming)
	marker := s.zeros(t, 16)
	require.NoError(t, p.EventRecord(before, st))
	require.NoError(t, p.GraphLaunch(exec, st), "the launch is queued; it fails when the stream reaches it")
	require.NoError(t, p.MemsetAsync(marker, 0x5a, 16, st))
	require.NoError(t, p.EventRecord(after, st))
	require.NoError(t, p.EventRecord(unrelated, other))

	assert.NoError(t, p.EventSynchronize(before), "work queued before the failure did not fail")
	for range 2 {
		s.expect(t, p.EventSynchronize(after), "hipEventSynchronize", hipsys.ErrorInvalidHandle)
		s.expect(t, p.EventQuery(after), "hipEventQuery", hipsys.ErrorInvalidHandle)
		s.expect(t, p.StreamQuery(st), "hipStreamQuery", hipsys.ErrorInvalidHandle)
	}
	assert.NoError(t, p.EventSynchronize(unrelated), "another stream's synchronization is not failed by it")
	// Read without s.download, whose DeviceSynchronize would acknowledge the failure;
	// the event above already waited for this work.
	read := func(ptr hipsys.DevicePtr, size int) []byte {
		out := make([]byte, size)
		require.NoError(t, p.MemcpyDtoH(out, ptr))
		return out
	}
	assert.True(t, bytes.Equal(bytes.Repeat([]byte{0x5a}, 16), read(marker, 16)), "work queued after the failure still ran")
	assert.True(t, bytes.Equal(make([]byte, 4*n), read(c, 4*n)), "the failed kernel wrote nothing")
	s.expect(t, p.StreamSynchronize(st), "hipStreamSynchronize", hipsys.ErrorInvalidHandle)
	assert.NoError(t, p.StreamSynchronize(st), "acknowledged by the stream's synchronization")
	assert.NoError(t, p.EventSynchronize(after))

	require.NoError(t, p.GraphLaunch(exec, st))
	s.expect(t, p.DeviceSynchronize(), "hipDeviceSynchronize", hipsys.ErrorInvalidHandle)
	assert.NoError(t, p.DeviceSynchronize())
}

// launchArguments holds the cpu platform to refusing a launch whose arguments do not
// match the kernel's parameters when it is made, not at a later synchronization: the
// cpu device knows every entry's parameter sizes from its compiled signature.
func (s *suite) launchArguments(t *testing.T) {
	fn := s.function(t, "vector", "saxpy") // saxpy(float alpha, const float* x, float* y, int n)
	x, y := s.upload(t, f32Bytes(ramp(4, 1, 0))), s.upload(t, f32Bytes(ramp(4, 1, 0)))
	st := s.stream(t, hipsys.StreamNonBlocking)
	for name, args := range map[string]*hipsys.KernelArgs{
		"too few":              new(hipsys.KernelArgs).F32(2).Ptr(x).Ptr(y),
		"too many":             new(hipsys.KernelArgs).F32(2).Ptr(x).Ptr(y).I32(4).I32(0),
		"none":                 nil,
		"buffers first":        new(hipsys.KernelArgs).Ptr(x).Ptr(y).F32(2).I32(4),
		"an I64 for the int":   new(hipsys.KernelArgs).F32(2).Ptr(x).Ptr(y).I64(4),
		"an F64 for the float": new(hipsys.KernelArgs).F64(2).Ptr(x).Ptr(y).I32(4),
	} {
		t.Run(name, func(t *testing.T) {
			s.expect(t, s.p.ModuleLaunchKernel(fn, dim(1, 1), dim(4, 1), 0, st, args), "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
		})
	}
	s.sync(t, st)
	assert.Equal(t, ramp(4, 1, 0), bytesF32(s.download(t, y, 16)), "no refused launch ran")
	s.launch(t, fn, dim(1, 1), dim(4, 1), 0, st, new(hipsys.KernelArgs).F32(2).Ptr(x).Ptr(y).I32(4))
	s.sync(t, st)
	assert.Equal(t, ramp(4, 3, 0), bytesF32(s.download(t, y, 16)))
}
