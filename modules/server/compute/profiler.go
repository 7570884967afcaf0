package compute

import (
	"fmt"
	"sync"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// ProfileToken names an open profiling window.
type ProfileToken uint64

// profiler is CubeCL's EventProfiler: a window is a start event recorded on the stream
// when it opens and an end event when it closes; the device stamps both, so opening a
// window never drains the stream, and the duration is device time between them. Events
// come from a pool (creating one per window would cost a driver call each).
//
// A failure anywhere while a window is open marks it invalid: a failing autotune
// candidate must not benchmark at close to zero and win the tune.
//
// The server's owner opens, closes and invalidates windows; futures return their events
// to the pool from any goroutine, hence the mutex.
type profiler struct {
	p    hipsys.Platform
	mu   sync.Mutex
	free []hipsys.Event
	open map[ProfileToken]*window
	next ProfileToken
}

type window struct {
	start  hipsys.Event
	failed error // the first failure seen while open
}

func newProfiler(p hipsys.Platform) *profiler {
	return &profiler{p: p, open: make(map[ProfileToken]*window)}
}

// event takes an event from the pool, or creates one with timing enabled (an event
// created with hipEventDisableTiming has no timestamp to measure).
func (pr *profiler) event() (hipsys.Event, error) {
	pr.mu.Lock()
	if n := len(pr.free); n > 0 {
		ev := pr.free[n-1]
		pr.free = pr.free[:n-1]
		pr.mu.Unlock()
		return ev, nil
	}
	pr.mu.Unlock()
	return pr.p.EventCreateWithFlags(hipsys.EventDefault)
}

func (pr *profiler) put(evs ...hipsys.Event) {
	pr.mu.Lock()
	pr.free = append(pr.free, evs...)
	pr.mu.Unlock()
}

// start opens a window on sys.
func (pr *profiler) start(sys hipsys.Stream) (ProfileToken, error) {
	ev, err := pr.event()
	if err != nil {
		return 0, fmt.Errorf("server: start_profile: %w", err)
	}
	if err := pr.p.EventRecord(ev, sys); err != nil {
		pr.put(ev)
		return 0, fmt.Errorf("server: start_profile: %w", err)
	}
	pr.mu.Lock()
	pr.next++
	tok := pr.next
	pr.open[tok] = &window{start: ev}
	pr.mu.Unlock()
	return tok, nil
}

// stop closes tok's window on sys and returns the future of its duration.
func (pr *profiler) stop(sys hipsys.Stream, tok ProfileToken) (*ProfileFuture, error) {
	w := pr.take(tok)
	if w == nil {
		return nil, fmt.Errorf("%w: token %d", ErrProfileNotRegistered, tok)
	}
	if w.failed != nil {
		pr.put(w.start)
		return nil, fmt.Errorf("%w: %w", ErrProfileInvalidated, w.failed)
	}
	end, err := pr.event()
	if err == nil {
		if err = pr.p.EventRecord(end, sys); err != nil {
			pr.put(end)
		}
	}
	if err != nil {
		pr.put(w.start)
		return nil, fmt.Errorf("server: end_profile: %w", err)
	}
	return &ProfileFuture{pr: pr, start: w.start, end: end}, nil
}

func (pr *profiler) take(tok ProfileToken) *window {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	w := pr.open[tok]
	delete(pr.open, tok)
	return w
}

// abandon drops tok's window; its start event returns to the pool. Unknown tokens are
// ignored.
func (pr *profiler) abandon(tok ProfileToken) {
	if w := pr.take(tok); w != nil {
		pr.put(w.start)
	}
}

// failure invalidates every open window. A no-op with none open.
func (pr *profiler) failure(err error) {
	pr.mu.Lock()
	for _, w := range pr.open {
		if w.failed == nil {
			w.failed = err
		}
	}
	pr.mu.Unlock()
}

// close destroys the pooled events and those of the windows still open (the server's
// Close has waited for the device, so no stream will stamp them). A future not yet
// waited for returns its events to a pool nobody reads again; they go with the device.
func (pr *profiler) close() {
	pr.mu.Lock()
	free := pr.free
	for tok, w := range pr.open {
		free = append(free, w.start)
		delete(pr.open, tok)
	}
	pr.free = nil
	pr.mu.Unlock()
	for _, ev := range free {
		_ = pr.p.EventDestroy(ev)
	}
}

// ProfileFuture is a closed window's duration. Wait may be called from any goroutine,
// once.
type ProfileFuture struct {
	pr         *profiler
	start, end hipsys.Event
}

// Wait blocks until the end event completes and returns the device time between the
// window's events (about a microsecond of resolution on a GPU).
func (f *ProfileFuture) Wait() (time.Duration, error) {
	defer f.pr.put(f.start, f.end)
	if err := f.pr.p.EventSynchronize(f.end); err != nil {
		return 0, fmt.Errorf("server: profile: %w", err)
	}
	ms, err := f.pr.p.EventElapsedTime(f.start, f.end)
	if err != nil {
		return 0, fmt.Errorf("server: profile: %w", err)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// profiledStream is the stream a profiling window records into. call names the server
// call asking ("start_profile", "end_profile"): both ends come here, since a capture can
// begin inside an open window. A stream recording a graph is refused: its events would
// become graph nodes rather than be stamped as queued, so the window would measure
// nothing, and reading it back would abort the capture.
func (s *Server) profiledStream(id StreamID, call string) (hipsys.Stream, error) {
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if r.Stream().Capture.IsRecording() {
		return 0, &stream.StateError{Call: call, Reason: "a capture window records launches only, so a profiling event has no recorded form"}
	}
	return r.Stream().Sys, nil
}

// StartProfile opens a profiling window on stream id, where the stream already is (no
// drain). Refused (stream.ErrGraphState) while the stream records a capture.
func (s *Server) StartProfile(id StreamID) (ProfileToken, error) {
	s.settleQueue()
	sys, err := s.profiledStream(id, "start_profile")
	if err != nil {
		return 0, err
	}
	return s.prof.start(sys)
}

// EndProfile closes tok's window on stream id and returns its duration's future. It
// fails with ErrProfileInvalidated when a failure happened while the window was open,
// ErrProfileNotRegistered for an unknown token, and stream.ErrGraphState when the stream
// is recording a capture: then the window is abandoned rather than left open with
// nothing to ever close it.
func (s *Server) EndProfile(id StreamID, tok ProfileToken) (*ProfileFuture, error) {
	s.settleQueue()
	sys, err := s.profiledStream(id, "end_profile")
	if err != nil {
		s.prof.abandon(tok)
		return nil, err
	}
	return s.prof.stop(sys, tok)
}

// AbandonProfile drops tok's window without recording anything; its start event returns
// to the pool. The stream is not used.
func (s *Server) AbandonProfile(_ StreamID, tok ProfileToken) { s.prof.abandon(tok) }
