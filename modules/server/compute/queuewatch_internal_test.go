package compute

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func newWatchedStream(t *testing.T) (*watched, hipsys.Stream) {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	w := newWatched(p)
	s, err := w.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	return w, s
}

// A destroyed stream's inferred state goes with it: the driver may hand its handle to a
// stream created later, which must start unknown (not idle, not shared, nothing
// unconfirmed), not inherit what the server inferred about the one before.
func TestStreamDestroyForgetsTheStreamState(t *testing.T) {
	w, s := newWatchedStream(t)
	q := w.state(s)
	require.NoError(t, w.StreamSynchronize(s))
	require.True(t, q.KnownIdle(), "a wait with nothing queued certifies it idle")
	q.Share()
	require.NoError(t, w.StreamDestroy(s))
	fresh := w.state(s)
	assert.NotSame(t, q, fresh, "the handle, if reused, names a new stream")
	assert.False(t, fresh.Shared())
	assert.False(t, fresh.KnownIdle())
}

// A stream-wide wait that meets a capture begun on its stream waits for the event
// recorded before the capture, and says it covered only that work (whole false): the
// commands queued after the capture began are recorded, not run, and a wait that
// claimed the whole stream would certify it idle and confirm writes that never ran.
func TestAWaitDuringACaptureCoversOnlyTheWorkBefore(t *testing.T) {
	w, s := newWatchedStream(t)
	defer func() { _ = w.StreamDestroy(s) }()
	q := w.state(s)
	require.NoError(t, w.ledger.BeginCapture(q, func() error { return nil })) // the guard's half of a capture
	waited := false
	whole, err := w.ledger.WaitGuarded(q, func() error { waited = true; return nil })
	require.NoError(t, err)
	assert.False(t, whole, "the wait covered the work before the capture only")
	assert.False(t, waited, "no stream-wide wait reaches a capturing stream")
	q.EndCapture()
	whole, err = w.ledger.WaitGuarded(q, func() error { waited = true; return nil })
	require.NoError(t, err)
	assert.True(t, whole)
	assert.True(t, waited)
	require.NoError(t, w.ledger.Close())
}
