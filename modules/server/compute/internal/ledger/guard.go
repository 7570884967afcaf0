package ledger

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A host wait on a stream may run after another caller began a capture on it: a Sync's
// future is made under the owner's lock while the stream records nothing, and waited
// for outside it (Device.Sync, Graph.Destroy), when another goroutine may have taken the
// lock and begun a capture on the same device stream (logical ids share device streams).
// A stream-wide wait on a capturing stream is illegal: the driver refuses it
// (hipErrorStreamCaptureUnsupported) and invalidates the capture, so the other caller's
// EndCapture fails for no fault of its own. The wait the future owes is for the work
// queued before it was made, all of which was queued before the capture began; an event
// recorded just before the capture began marks exactly that work, and an event recorded
// outside a capture may be waited for while the stream captures.
//
// Invariants:
//   - A stream-wide wait through the ledger (WaitGuarded) never reaches the driver while
//     its stream records a capture begun through the ledger (BeginCapture): it holds the
//     stream's guard for reading, and BeginCapture holds it for writing.
//   - While the guard says recording, before is recorded on the stream ahead of the
//     capture's first node: every command queued before BeginCapture precedes it.
//   - A wait that took the event path covers only the work before the capture: it
//     certifies nothing idle and confirms no write (whole false), since the writes
//     queued after the capture began are recorded, not run.
type captureGuard struct {
	// mu is held for reading across a stream-wide wait, for writing across a capture's
	// beginning and end, and for writing by release; it guards recording and before.
	mu        sync.RWMutex
	recording bool
	before    hipsys.Event // noEvent until the stream's first capture, and after release
}

const (
	// noEvent is captureGuard.before before the stream's first capture: the event is
	// created then, so a stream never captured costs no event.
	noEvent hipsys.Event = 0
	// beforeCaptureEventFlags: the event only orders; a timing event costs more to
	// record.
	beforeCaptureEventFlags = hipsys.EventDisableTiming
)

// WaitGuarded runs wait, a stream-wide wait of q, unless q records a capture; then it
// waits for the event recorded before the capture instead and reports whole false.
func (l *Ledger) WaitGuarded(q *Stream, wait func() error) (whole bool, err error) {
	g := &q.guard
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.recording {
		return true, wait()
	}
	return false, l.events.EventSynchronize(g.before)
}

// BeginCapture begins a capture of q (begin) once no stream-wide wait of q is running,
// with the event that marks the work before it recorded first.
func (l *Ledger) BeginCapture(q *Stream, begin func() error) error {
	g := &q.guard
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.before == noEvent {
		ev, err := l.events.EventCreateWithFlags(beforeCaptureEventFlags)
		if err != nil {
			return err
		}
		g.before = ev
	}
	// The platform's own record: a counted one would be taken for a cross-stream fence.
	if err := l.events.EventRecord(g.before, q.Sys()); err != nil {
		return err
	}
	if err := begin(); err != nil {
		return err
	}
	g.recording = true
	return nil
}

// EndCapture ends q's capture: stream-wide waits reach the driver again.
func (q *Stream) EndCapture() {
	g := &q.guard
	g.mu.Lock()
	g.recording = false
	g.mu.Unlock()
}

// release destroys the guard's event, once every wait on it is over.
func (g *captureGuard) release(ev Events) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A capture left recording has no reader of its guard left: a later wait (a stream
	// closing) goes to the driver, as on a stream never captured.
	g.recording = false
	if g.before == noEvent {
		return nil
	}
	err := ev.EventDestroy(g.before)
	g.before = noEvent
	return err
}
