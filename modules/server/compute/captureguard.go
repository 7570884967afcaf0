package compute

import "github.com/cubehip/cubehip/modules/hipsys"

// The capture guard's calls through the queue watch. A host wait on a stream may run
// after another caller began a capture on it (a Sync's future waited for outside the
// owner's lock); a stream-wide wait on a capturing stream would invalidate the capture,
// so the wait then waits for an event recorded just before the capture began. The
// guard's state, its lock and its invariants are the stream's ledger entry's
// (internal/ledger, guard.go); here are the calls that take it.

// syncCovering is syncQuiet, and whether the wait covered everything queued before it:
// false when s records a capture, and the wait covered the work before the capture
// (the ledger's capture guard).
func (w *queueWatch) syncCovering(s hipsys.Stream) (whole bool, err error) {
	q := w.ledger.Of(s)
	return w.ledger.WaitGuarded(q, func() error {
		if w.flags != nil {
			return w.syncFlagged(q)
		}
		return q.Certify(w.calls.StreamSynchronize)
	})
}

// A capture queues nothing, but the stream's state changes under it: counted, so a
// stream is never taken for idle across a capture's beginning or end.
func (w *queueWatch) StreamBeginCapture(s hipsys.Stream, mode hipsys.CaptureMode) error {
	q := w.begin(s)
	err := w.ledger.BeginCapture(q, func() error { return w.calls.StreamBeginCapture(s, mode) })
	q.End()
	return err
}

func (w *queueWatch) StreamEndCapture(s hipsys.Stream) (g hipsys.Graph, err error) {
	q := w.begin(s)
	g, err = w.calls.StreamEndCapture(s)
	q.EndCapture()
	q.End()
	return g, err
}
