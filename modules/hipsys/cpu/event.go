package cpu

import (
	"sync"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// event is a marker in a stream. Each EventRecord starts a new generation that
// points at one command of one stream; the event is complete when the worker has run
// that command, which stamps the time. Re-recording is allowed, and a wait or a query
// always concerns the generation current when it is issued, as in HIP.
type event struct {
	flags hipsys.EventFlags

	mu      sync.Mutex
	gen     uint64  // records issued; 0 = never recorded
	stream  *stream // the stream of the latest record
	seq     uint64  // the latest record's position in that stream
	stamped uint64  // the latest generation whose record has run
	at      time.Time
	// captured is the capture the event was last recorded into (a node of its graph,
	// not a record that will run), nil once it is recorded outside a capture again
	// (see checkCaptured).
	captured *capture
}

// recordedInCapture notes that the event's last record went into capture c.
func (e *event) recordedInCapture(c *capture) {
	e.mu.Lock()
	e.captured = c
	e.mu.Unlock()
}

// checkCaptured refuses call on an event last recorded into a capture still running,
// invalidating that capture, as CUDA's driver does (the wait returns
// hipErrorCapturedEvent, the capture's end hipErrorStreamCaptureInvalidated): there is
// no moment to wait for until a replay. Once the capture has ended the event
// is as it was before the captured record.
func (e *event) checkCaptured(call string) error {
	e.mu.Lock()
	c := e.captured
	e.mu.Unlock()
	if c == nil || c.ended.Load() {
		return nil
	}
	c.invalid.Store(true)
	return errorf(call, hipsys.ErrorCapturedEvent, "the event was last recorded in a capturing stream")
}

// mark makes the record at seq on s the event's latest generation and returns it.
// Called with s.mu held; e.mu is always taken last, so the lock order is stream, event.
func (e *event) mark(s *stream, seq uint64) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gen++
	e.stream, e.seq = s, seq
	e.captured = nil
	return e.gen
}

// stamp is the worker running the record of generation gen. An older generation
// finishing after a newer one was recorded elsewhere must not stamp over it, or a
// re-recorded event would complete early with a stale time.
func (e *event) stamp(gen uint64, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if gen > e.stamped {
		e.stamped, e.at = gen, at
	}
}

// position is what a waiter must wait for: the stream and command of the latest
// record, or nil when there is nothing to wait for (never recorded, or already done).
func (e *event) position() (*stream, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen == 0 || e.stamped == e.gen {
		return nil, 0
	}
	return e.stream, e.seq
}

// latest is the stream and command of the latest record, done or not; nil when the
// event was never recorded.
func (e *event) latest() (*stream, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen == 0 {
		return nil, 0
	}
	return e.stream, e.seq
}

// state reads whether the event was ever recorded, whether its latest record has run,
// and the time of that run.
func (e *event) state() (recorded, complete bool, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen > 0, e.stamped == e.gen, e.at
}

var errEventNotReady = errorf("hipEventQuery", hipsys.ErrorNotReady, "")

// EventCreateWithFlags makes an event. EventInterprocess is hipErrorNotSupported: the
// cpu device has no other process to share with.
func (p *Platform) EventCreateWithFlags(flags hipsys.EventFlags) (hipsys.Event, error) {
	const call = "hipEventCreateWithFlags"
	if flags&^(hipsys.EventBlockingSync|hipsys.EventDisableTiming|hipsys.EventInterprocess) != 0 {
		return 0, errorf(call, hipsys.ErrorInvalidValue, "unknown event flags")
	}
	if flags&hipsys.EventInterprocess != 0 {
		return 0, errorf(call, hipsys.ErrorNotSupported, "interprocess events")
	}
	return hipsys.Event(p.events.add(&event{flags: flags})), nil
}

func (p *Platform) event(call string, h hipsys.Event) (*event, error) {
	if e := p.events.get(uintptr(h)); e != nil {
		return e, nil
	}
	return nil, errorf(call, hipsys.ErrorInvalidHandle, "unknown or destroyed event")
}

// EventRecord queues a record of the event on the stream and returns at once; the event
// completes, with a timestamp, when the stream's worker reaches it. On a capturing
// stream the record becomes a graph node instead and the event is left as it was.
func (p *Platform) EventRecord(h hipsys.Event, sh hipsys.Stream) error {
	const call = "hipEventRecord"
	e, err := p.event(call, h)
	if err != nil {
		return err
	}
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	t := command{kind: cmdRecord, ev: e}
	return s.enqueue(call, &t)
}

// EventQuery is nil when the latest record has run (or the event was never recorded)
// and hipErrorNotReady before. Once it has run, an asynchronous failure of the work
// queued before it on its stream is returned instead, as EventSynchronize returns it.
// It does not block.
func (p *Platform) EventQuery(h hipsys.Event) error {
	const call = "hipEventQuery"
	e, err := p.event(call, h)
	if err != nil {
		return err
	}
	if err := e.checkCaptured(call); err != nil {
		return err
	}
	if _, complete, _ := e.state(); !complete {
		return errEventNotReady
	}
	if s, seq := e.latest(); s != nil {
		if failure := s.failedBy(seq); failure != nil {
			return asyncError(call, failure)
		}
	}
	return nil
}

// EventSynchronize blocks until the event's latest record (as of the call) has run. An
// asynchronous failure of the work queued before the record on its stream is returned
// then, as a GPU reports a failed kernel at the next synchronization of any kind; it is
// not acknowledged, so every synchronization that waits past the failed command reports
// it until a StreamSynchronize or DeviceSynchronize does (see the package doc). Work
// queued after the record cannot fail it.
func (p *Platform) EventSynchronize(h hipsys.Event) error {
	const call = "hipEventSynchronize"
	e, err := p.event(call, h)
	if err != nil {
		return err
	}
	if err := e.checkCaptured(call); err != nil {
		return err
	}
	s, seq := e.latest()
	if s == nil {
		return nil
	}
	s.waitFor(seq)
	if failure := s.failedBy(seq); failure != nil {
		return asyncError(call, failure)
	}
	return nil
}

// EventElapsedTime is the time in milliseconds from start's record to stop's, as HIP
// specifies it: hipErrorInvalidHandle if either was created with EventDisableTiming or
// never recorded, hipErrorNotReady if either has not completed. The clock is Go's
// monotonic clock, stamped when the worker reaches the record.
func (p *Platform) EventElapsedTime(start, stop hipsys.Event) (float32, error) {
	const call = "hipEventElapsedTime"
	a, err := p.event(call, start)
	if err != nil {
		return 0, err
	}
	b, err := p.event(call, stop)
	if err != nil {
		return 0, err
	}
	if a.flags&hipsys.EventDisableTiming != 0 || b.flags&hipsys.EventDisableTiming != 0 {
		return 0, errorf(call, hipsys.ErrorInvalidHandle, "event created with hipEventDisableTiming")
	}
	aRec, aDone, aAt := a.state()
	bRec, bDone, bAt := b.state()
	if !aRec || !bRec {
		return 0, errorf(call, hipsys.ErrorInvalidHandle, "event never recorded")
	}
	if !aDone || !bDone {
		return 0, errorf(call, hipsys.ErrorNotReady, "")
	}
	return float32(bAt.Sub(aAt).Seconds() * 1000), nil
}

// EventDestroy forgets the event. A record or wait already queued still completes.
func (p *Platform) EventDestroy(h hipsys.Event) error {
	if p.events.remove(uintptr(h)) == nil {
		return errorf("hipEventDestroy", hipsys.ErrorInvalidHandle, "unknown or destroyed event")
	}
	return nil
}
