package conformance

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// graphReplays is how often the captured graph is launched: enough that a replay that
// skips, repeats or reorders a node is visible in the wrapped arithmetic.
const graphReplays = 100

func (s *suite) graphs(t *testing.T) {
	t.Run("capture and replay", s.captureReplay)
	t.Run("sync invalidates capture", s.captureInvalidated)
	t.Run("end capture without begin", func(t *testing.T) {
		st := s.stream(t, hipsys.StreamNonBlocking)
		_, err := s.p.StreamEndCapture(st)
		// CUDA says ILLEGAL_STATE (401); AMD's HIP says hipErrorIllegalState on recent
		// ROCm, hipErrorInvalidValue on older, and hipErrorStreamCaptureUnmatched
		// where it treats the call as closing someone else's capture.
		s.expect(t, err, "hipStreamEndCapture", hipsys.ErrorIllegalState, hipsys.ErrorInvalidValue, hipsys.ErrorStreamCaptureUnmatched)
	})
	t.Run("capture on the null stream", func(t *testing.T) {
		// The legacy null stream synchronizes with every other stream, so it cannot be
		// captured: STREAM_CAPTURE_UNSUPPORTED on both CUDA and AMD (older ROCm:
		// hipErrorInvalidValue).
		err := s.p.StreamBeginCapture(hipsys.NullStream, hipsys.CaptureModeGlobal)
		s.expect(t, err, "hipStreamBeginCapture", hipsys.ErrorStreamCaptureUnsupported, hipsys.ErrorInvalidValue)
	})
}

func (s *suite) captureReplay(t *testing.T) {
	// HIP and CUDA end a global or thread-local capture only on the OS thread that began
	// it (hipErrorStreamCaptureWrongThread otherwise): keep this goroutine on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := s.p
	const n = 1000
	init := make([]uint32, n)
	for i := range init {
		init[i] = uint32(i) * 2654435761
	}
	x, y, scratch := s.upload(t, u32Bytes(init)), s.zeros(t, 4*n), s.zeros(t, 4*n)
	add, mul, sub := s.function(t, "graph", "add_one"), s.function(t, "graph", "mul_two"), s.function(t, "graph", "sub_three")
	st := s.stream(t, hipsys.StreamNonBlocking)
	args := new(hipsys.KernelArgs).Ptr(x).I32(n)
	grid, block := dim(blocks(n, 128), 1), dim(128, 1)

	status, err := p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, status)

	require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeGlobal))
	status, err = p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusActive, status)
	require.NoError(t, p.MemsetAsync(scratch, 0x01, 4*n, st))
	s.launch(t, add, grid, block, 0, st, args)
	s.launch(t, mul, grid, block, 0, st, args)
	s.launch(t, sub, grid, block, 0, st, args)
	require.NoError(t, p.MemcpyDtoDAsync(y, x, 4*n, st))
	graph, err := p.StreamEndCapture(st)
	require.NoError(t, err)
	require.NotZero(t, graph)
	defer func() { assert.NoError(t, p.GraphDestroy(graph)) }()

	status, err = p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, status, "capture ended")
	s.sync(t, st)
	assert.Equal(t, init, bytesU32(s.download(t, x, 4*n)), "captured work is recorded, not run")

	nodes, err := p.GraphGetNodes(graph)
	require.NoError(t, err)
	types := map[hipsys.GraphNodeType]int{}
	for _, node := range nodes {
		typ, err := p.GraphNodeGetType(node)
		require.NoError(t, err)
		types[typ]++
	}
	assert.Len(t, nodes, 5)
	assert.Equal(t, map[hipsys.GraphNodeType]int{hipsys.GraphNodeKernel: 3, hipsys.GraphNodeMemset: 1, hipsys.GraphNodeMemcpy: 1}, types)

	exec, err := p.GraphInstantiate(graph)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.GraphExecDestroy(exec)) }()
	require.NoError(t, p.GraphUpload(exec, st))
	for range graphReplays {
		require.NoError(t, p.GraphLaunch(exec, st))
	}
	s.sync(t, st)

	want := append([]uint32(nil), init...)
	for range graphReplays {
		for i := range want {
			want[i] = (want[i]+1)*2 - 3
		}
	}
	assert.Equal(t, want, bytesU32(s.download(t, x, 4*n)), "x after %d replays", graphReplays)
	assert.Equal(t, want, bytesU32(s.download(t, y, 4*n)), "the captured copy ran last")
	assert.True(t, bytes.Equal(bytes.Repeat([]byte{1}, 4*n), s.download(t, scratch, 4*n)), "the captured memset ran")
}

func (s *suite) captureInvalidated(t *testing.T) {
	// HIP and CUDA end a global or thread-local capture only on the OS thread that began
	// it (hipErrorStreamCaptureWrongThread otherwise): keep this goroutine on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := s.p
	st := s.stream(t, hipsys.StreamNonBlocking)
	x := s.zeros(t, 4*128)
	add := s.function(t, "graph", "add_one")
	args := new(hipsys.KernelArgs).Ptr(x).I32(128)

	require.NoError(t, p.StreamBeginCapture(st, hipsys.CaptureModeGlobal))
	s.launch(t, add, dim(1, 1), dim(128, 1), 0, st, args)
	// Waiting for a capturing stream from the host is illegal: CUDA and AMD both say
	// STREAM_CAPTURE_UNSUPPORTED (900); some ROCm releases report the capture as
	// already invalidated (901) instead.
	s.expect(t, p.StreamSynchronize(st), "hipStreamSynchronize", hipsys.ErrorStreamCaptureUnsupported, hipsys.ErrorStreamCaptureInvalidated)
	status, err := p.StreamIsCapturing(st)
	if assert.NoError(t, err) {
		// The failed sync invalidated the capture (CUDA); a runtime that ends it
		// outright reads None.
		assert.Contains(t, []hipsys.CaptureStatus{hipsys.CaptureStatusInvalidated, hipsys.CaptureStatusNone}, status)
	}
	graph, err := p.StreamEndCapture(st)
	// Ending an invalidated capture gives no graph: STREAM_CAPTURE_INVALIDATED (901) on
	// CUDA and recent ROCm; a runtime that already ended the capture says so as
	// ILLEGAL_STATE or STREAM_CAPTURE_UNMATCHED.
	if !s.expect(t, err, "hipStreamEndCapture", hipsys.ErrorStreamCaptureInvalidated, hipsys.ErrorStreamCaptureUnsupported,
		hipsys.ErrorIllegalState, hipsys.ErrorStreamCaptureUnmatched) && graph != 0 {
		_ = p.GraphDestroy(graph)
	}

	status, err = p.StreamIsCapturing(st)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, status)
	s.launch(t, add, dim(1, 1), dim(128, 1), 0, st, args)
	s.sync(t, st)
	assert.Equal(t, uint32(1), bytesU32(s.download(t, x, 4*128))[0], "the stream works again, and the captured launch never ran")
}
