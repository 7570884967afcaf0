package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// TestCaptureReplay: captured copies and memsets do not run while capturing, and each
// launch of the instantiated graph runs them all, in order.
func TestCaptureReplay(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	const n = 64
	d, err := p.Malloc(n)
	require.NoError(t, err)
	e, err := p.Malloc(n)
	require.NoError(t, err)
	pin, err := p.HostMalloc(n, 0)
	require.NoError(t, err)
	ev, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	require.NoError(t, p.Memset(d, 0, n))

	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	st, err := p.StreamIsCapturing(h)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusActive, st)
	requireStatus(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal), "hipStreamBeginCapture", hipsys.ErrorIllegalState)

	require.NoError(t, p.MemcpyHtoDAsync(d, pin, n, h))                                                                                                                             // Memcpy
	require.NoError(t, p.MemsetAsync(e, 0, n, h))                                                                                                                                   // Memset
	require.NoError(t, p.MemcpyDtoDAsync(e, d, n/2, h))                                                                                                                             // Memcpy
	require.NoError(t, p.EventRecord(ev, h))                                                                                                                                        // EventRecord
	require.NoError(t, p.StreamWaitEvent(h, ev, 0))                                                                                                                                 // WaitEvent
	require.NoError(t, p.MemcpyDtoHAsync(pin, e, n, h))                                                                                                                             // Memcpy
	require.NoError(t, p.Memcpy2DAsync(hipsys.Copy2D{Dst: uintptr(e) + n/2, DstPitch: 8, Src: uintptr(d), SrcPitch: 8, Width: 8, Height: 1, Kind: hipsys.MemcpyDeviceToDevice}, h)) // Memcpy
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	st, err = p.StreamIsCapturing(h)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, st)
	require.NoError(t, p.EventQuery(ev), "a captured record leaves the event as it was")

	// Nothing ran: d is still zero.
	got := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(got, d))
	assert.Equal(t, make([]byte, n), got)

	nodes, err := p.GraphGetNodes(g)
	require.NoError(t, err)
	want := []hipsys.GraphNodeType{hipsys.GraphNodeMemcpy, hipsys.GraphNodeMemset, hipsys.GraphNodeMemcpy,
		hipsys.GraphNodeEventRecord, hipsys.GraphNodeWaitEvent, hipsys.GraphNodeMemcpy, hipsys.GraphNodeMemcpy}
	require.Len(t, nodes, len(want))
	for i, nd := range nodes {
		typ, err := p.GraphNodeGetType(nd)
		require.NoError(t, err)
		assert.Equal(t, want[i], typ, "node %d", i)
	}

	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphDestroy(g)) // as CubeCL does: the exec outlives its graph
	_, err = p.GraphNodeGetType(nodes[0])
	requireStatus(t, err, "hipGraphNodeGetType", hipsys.ErrorInvalidHandle)
	require.NoError(t, p.GraphUpload(x, h))

	for round := byte(1); round <= 3; round++ {
		for i := range pin.Bytes(n) {
			pin.Bytes(n)[i] = round
		}
		require.NoError(t, p.GraphLaunch(x, h))
		require.NoError(t, p.StreamSynchronize(h))
		// pin -> d -> first half of e (second half zeroed), then e -> pin.
		b := pin.Bytes(n)
		assert.Equal(t, round, b[0], "round %d", round)
		assert.Equal(t, round, b[n/2-1], "round %d", round)
		assert.Zero(t, b[n/2], "round %d", round)
		require.NoError(t, p.EventQuery(ev))
		// The 2D node copied 8 bytes of d into the second half of e after e went to pin.
		require.NoError(t, p.MemcpyDtoH(got, e))
		assert.Equal(t, round, got[n/2])
	}

	// A graph launched on the null stream runs there as well.
	require.NoError(t, p.GraphLaunch(x, 0))
	require.NoError(t, p.StreamSynchronize(0))

	require.NoError(t, p.GraphExecDestroy(x))
	requireStatus(t, p.GraphLaunch(x, h), "hipGraphLaunch", hipsys.ErrorInvalidHandle)
	require.NoError(t, p.EventDestroy(ev))
	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.Free(d))
	require.NoError(t, p.Free(e))
	require.NoError(t, p.HostFree(pin))
}

// TestCaptureInvalidation: the calls HIP forbids during a global capture fail with
// hipErrorStreamCaptureUnsupported and invalidate it; EndCapture then reports it.
func TestCaptureInvalidation(t *testing.T) {
	p := newTest(t)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	buf := make([]byte, 64)
	cases := []struct {
		name string
		call string
		do   func(h hipsys.Stream) error
	}{
		{"sync the stream", "hipStreamSynchronize", func(h hipsys.Stream) error { return p.StreamSynchronize(h) }},
		{"query the stream", "hipStreamQuery", func(h hipsys.Stream) error { return p.StreamQuery(h) }},
		{"device sync", "hipDeviceSynchronize", func(hipsys.Stream) error { return p.DeviceSynchronize() }},
		{"malloc", "hipMalloc", func(hipsys.Stream) error { _, err := p.Malloc(8); return err }},
		{"free", "hipFree", func(hipsys.Stream) error { return p.Free(d) }},
		{"blocking copy", "hipMemcpyDtoH", func(hipsys.Stream) error { return p.MemcpyDtoH(buf, d) }},
		{"blocking memset", "hipMemset", func(hipsys.Stream) error { return p.Memset(d, 1, 8) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
			require.NoError(t, err)
			defer func() { require.NoError(t, p.StreamDestroy(h)) }()
			require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
			require.NoError(t, p.MemsetAsync(d, 1, 64, h))
			requireStatus(t, c.do(h), c.call, hipsys.ErrorStreamCaptureUnsupported)
			st, err := p.StreamIsCapturing(h)
			require.NoError(t, err)
			assert.Equal(t, hipsys.CaptureStatusInvalidated, st)
			requireStatus(t, p.MemsetAsync(d, 1, 64, h), "hipMemsetAsync", hipsys.ErrorStreamCaptureInvalidated)
			_, err = p.StreamEndCapture(h)
			requireStatus(t, err, "hipStreamEndCapture", hipsys.ErrorStreamCaptureInvalidated)
			st, err = p.StreamIsCapturing(h)
			require.NoError(t, err)
			assert.Equal(t, hipsys.CaptureStatusNone, st)
		})
	}

	// A relaxed capture allows them.
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeRelaxed))
	m, err := p.Malloc(8)
	require.NoError(t, err)
	require.NoError(t, p.Free(m))
	require.NoError(t, p.MemcpyDtoH(buf, d))
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	require.NoError(t, p.GraphDestroy(g))
	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.Free(d))
}

func TestCaptureErrors(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	_, err = p.StreamEndCapture(h)
	requireStatus(t, err, "hipStreamEndCapture", hipsys.ErrorIllegalState)
	_, err = p.StreamEndCapture(0)
	requireStatus(t, err, "hipStreamEndCapture", hipsys.ErrorIllegalState)
	requireStatus(t, p.StreamBeginCapture(0, hipsys.CaptureModeGlobal), "hipStreamBeginCapture", hipsys.ErrorStreamCaptureUnsupported)
	requireStatus(t, p.StreamBeginCapture(h, 7), "hipStreamBeginCapture", hipsys.ErrorInvalidValue)
	st, err := p.StreamIsCapturing(0)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, st)

	// An empty capture is a valid, empty graph.
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeThreadLocal))
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	nodes, err := p.GraphGetNodes(g)
	require.NoError(t, err)
	assert.Empty(t, nodes)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphLaunch(x, h))
	require.NoError(t, p.StreamSynchronize(h))

	const bogus = 0x31337
	_, err = p.GraphGetNodes(bogus)
	requireStatus(t, err, "hipGraphGetNodes", hipsys.ErrorInvalidHandle)
	_, err = p.GraphNodeGetType(bogus)
	requireStatus(t, err, "hipGraphNodeGetType", hipsys.ErrorInvalidHandle)
	_, err = p.GraphInstantiate(bogus)
	requireStatus(t, err, "hipGraphInstantiate", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.GraphUpload(bogus, h), "hipGraphUpload", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.GraphUpload(x, bogus), "hipGraphUpload", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.GraphLaunch(bogus, h), "hipGraphLaunch", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.GraphLaunch(x, bogus), "hipGraphLaunch", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.GraphExecDestroy(bogus), "hipGraphExecDestroy", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.GraphDestroy(bogus), "hipGraphDestroy", hipsys.ErrorInvalidHandle)

	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.GraphDestroy(g))
	requireStatus(t, p.GraphDestroy(g), "hipGraphDestroy", hipsys.ErrorInvalidHandle)
	require.NoError(t, p.StreamDestroy(h))
}

// TestGraphOutlivingItsMemory: a replay whose copy node points at freed memory fails
// instead of writing it.
func TestGraphOutlivingItsMemory(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	require.NoError(t, p.MemsetAsync(d, 1, 64, h))
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphLaunch(x, h))
	require.NoError(t, p.Free(d))
	requireStatus(t, p.GraphLaunch(x, h), "hipGraphLaunch", hipsys.ErrorInvalidValue)
	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.GraphDestroy(g))
	require.NoError(t, p.StreamDestroy(h))
}

// TestGraphLaunchIntoCapture: launching a graph on a capturing stream records its nodes.
func TestGraphLaunchIntoCapture(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	require.NoError(t, p.MemsetAsync(d, 1, 64, h))
	require.NoError(t, p.MemsetAsync(d, 2, 32, h))
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	require.NoError(t, p.GraphLaunch(x, h))
	g2, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	nodes, err := p.GraphGetNodes(g2)
	require.NoError(t, err)
	assert.Len(t, nodes, 2)
	for _, gh := range []hipsys.Graph{g, g2} {
		require.NoError(t, p.GraphDestroy(gh))
	}
	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.Free(d))
}

// TestCapturedEventRefused: an event recorded into a running capture has no moment to
// wait for until a replay: a wait for it or a query of it, from any thread and in any
// capture mode, is hipErrorCapturedEvent and invalidates the capture, as on CUDA. Once
// the capture has ended the event is as it was; a record outside a capture makes it an
// ordinary event again.
func TestCapturedEventRefused(t *testing.T) {
	p := newTest(t)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(d)) }()
	for _, wait := range []struct {
		call string
		do   func(ev hipsys.Event) error
	}{
		{"hipEventSynchronize", p.EventSynchronize},
		{"hipEventQuery", p.EventQuery},
	} {
		t.Run(wait.call, func(t *testing.T) {
			h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
			require.NoError(t, err)
			defer func() { require.NoError(t, p.StreamDestroy(h)) }()
			ev, err := p.EventCreateWithFlags(hipsys.EventDisableTiming)
			require.NoError(t, err)
			defer func() { require.NoError(t, p.EventDestroy(ev)) }()
			require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeRelaxed))
			require.NoError(t, p.MemsetAsync(d, 1, 64, h))
			require.NoError(t, p.EventRecord(ev, h))
			done := make(chan error, 1)
			go func() { done <- wait.do(ev) }() // another goroutine's wait, as a future's
			requireStatus(t, <-done, wait.call, hipsys.ErrorCapturedEvent)
			st, err := p.StreamIsCapturing(h)
			require.NoError(t, err)
			assert.Equal(t, hipsys.CaptureStatusInvalidated, st)
			_, err = p.StreamEndCapture(h)
			requireStatus(t, err, "hipStreamEndCapture", hipsys.ErrorStreamCaptureInvalidated)
			require.NoError(t, wait.do(ev), "after the capture the event is as it was")
			require.NoError(t, p.EventRecord(ev, h))
			require.NoError(t, p.EventSynchronize(ev))
		})
	}
}
