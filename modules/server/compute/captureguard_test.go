package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// TestSyncWaitedAfterACaptureBegan: a Sync's future is made while the stream records
// nothing and waited for (outside the owner's lock, as the Device waits) after another
// caller began a capture on the same device stream. The wait covers the work queued
// before the capture without touching the capturing stream (a stream-wide wait on it
// would invalidate the capture), and the capture ends with its graph. This is the race
// that failed TestCloseWithGoroutinesWorking on the H200: Graph.Destroy's wait landed
// inside another goroutine's capture.
func TestSyncWaitedAfterACaptureBegan(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	launch(t, e.srv, addOne, 4, 0, in, out)
	pending := e.srv.Sync(nil, 0)

	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	require.NoError(t, e.srv.BeginCapture(0))
	require.NoError(t, pending.Wait(), "the wait for the work before the capture")
	launch(t, e.srv, addOne, 4, 0, in, out)
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err, "the capture survived the wait")
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4))
	e.srv.GraphDestroy(g, 0)
}

// TestCrossStreamWaitOnARecordingStreamIsRefused: a launch on stream 1 of a buffer last
// written on stream 0, while stream 0 records a capture, is refused (its output carries
// the refusal, as every failure of a launch's work is carried): the fence it would
// wait for would be recorded into the capture (a node of the graph, not a moment that
// comes), so the launch would either not wait for the write at all or be pulled into the
// capture. The buffer reads its bytes once the capture is over.
func TestCrossStreamWaitOnARecordingStreamIsRefused(t *testing.T) {
	e := newEnv(t)
	in, mid, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4), e.empty(1, 4)
	launch(t, e.srv, addOne, 4, 0, in, mid) // mid's last write: stream 0
	require.NoError(t, e.srv.GraphPrepare(0))
	require.NoError(t, e.srv.BeginCapture(0))
	launch(t, e.srv, addOne, 4, 1, mid, out) // refused: out carries why
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err, "the capture is untouched")
	e.srv.GraphDestroy(g, 0)
	_, err = e.srv.Read([]compute.CopyDescriptor{compute.Linear(out, 16)}, 1).Wait()
	require.ErrorIs(t, err, stream.ErrGraphState, "the refused launch's output carries the refusal")
	launch(t, e.srv, addOne, 4, 1, mid, out)
	assert.Equal(t, []float32{3, 4, 5, 6}, e.mustRead(1, out, 4))
}
