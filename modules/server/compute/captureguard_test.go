package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
