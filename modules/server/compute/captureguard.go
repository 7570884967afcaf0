package compute

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
//   - A stream-wide wait through the watch (syncQuiet) never reaches the driver while
//     its stream records a capture begun through the watch: it holds the stream's guard
//     for reading, and StreamBeginCapture holds it for writing.
//   - While the guard says recording, before is recorded on the stream ahead of the
//     capture's first node: every command queued before BeginCapture precedes it.
//   - A wait that took the event path covers only the work before the capture: it
//     certifies nothing idle and confirms no write (captureCovered false), since the
//     writes queued after the capture began are recorded, not run.
type captureGuard struct {
	mu        sync.RWMutex
	recording bool
	before    hipsys.Event // 0 until the stream's first capture
}

// beforeCaptureEventFlags: the event only orders; a timing event costs more to record.
const beforeCaptureEventFlags = hipsys.EventDisableTiming

func (w *queueWatch) guard(s hipsys.Stream) *captureGuard {
	if g, ok := w.guards.Load(s); ok {
		return g.(*captureGuard)
	}
	g, _ := w.guards.LoadOrStore(s, &captureGuard{})
	return g.(*captureGuard)
}

// waitGuarded runs wait, a stream-wide wait of s, unless s records a capture; then it
// waits for the event recorded before the capture instead and reports whole false.
func (w *queueWatch) waitGuarded(s hipsys.Stream, wait func() error) (whole bool, err error) {
	g := w.guard(s)
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.recording {
		return true, wait()
	}
	return false, w.Platform.EventSynchronize(g.before)
}

// beginGuarded begins a capture of s once no stream-wide wait of s is running, with the
// event that marks the work before it recorded first.
func (w *queueWatch) beginGuarded(s hipsys.Stream, begin func() error) error {
	g := w.guard(s)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.before == 0 {
		ev, err := w.Platform.EventCreateWithFlags(beforeCaptureEventFlags)
		if err != nil {
			return err
		}
		g.before = ev
	}
	// The platform's own record: the watch's would take it for a cross-stream fence.
	if err := w.Platform.EventRecord(g.before, s); err != nil {
		return err
	}
	if err := begin(); err != nil {
		return err
	}
	g.recording = true
	return nil
}

// endGuarded ends s's capture: stream-wide waits reach the driver again.
func (w *queueWatch) endGuarded(s hipsys.Stream) {
	g := w.guard(s)
	g.mu.Lock()
	g.recording = false
	g.mu.Unlock()
}

// releaseGuards destroys the guards' events (Close, with every wait over).
func (w *queueWatch) releaseGuards() error {
	var first error
	w.guards.Range(func(k, v any) bool {
		g := v.(*captureGuard)
		g.mu.Lock()
		if g.before != 0 {
			if err := w.Platform.EventDestroy(g.before); err != nil && first == nil {
				first = err
			}
			g.before = 0
		}
		g.mu.Unlock()
		w.guards.Delete(k)
		return true
	})
	return first
}
