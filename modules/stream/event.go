package stream

import (
	"errors"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Fence is an event recorded on a stream: everything queued on the stream before it is
// done once the fence is. Events are created with timing enabled (hipEventDefault), as
// CubeCL's are.
//
// A Fence is waited on (or waited for by another stream) exactly once; both consume it.
// Safe for use from any goroutine, one at a time: the release worker and read futures
// wait on fences recorded by the stream's own goroutine.
type Fence struct {
	p  hipsys.Platform
	ev hipsys.Event
}

// NewFence records a fence on stream. It never waits. On failure no event is left behind.
func NewFence(p hipsys.Platform, stream hipsys.Stream) (Fence, error) {
	ev, err := p.EventCreateWithFlags(hipsys.EventDefault)
	if err != nil {
		return Fence{}, stepError("create a fence", err)
	}
	if err := p.EventRecord(ev, stream); err != nil {
		_ = p.EventDestroy(ev)
		return Fence{}, stepError("record a fence", err)
	}
	return Fence{p: p, ev: ev}, nil
}

// Valid reports whether f holds an event.
func (f Fence) Valid() bool { return f.p != nil }

// Wait blocks the calling goroutine until the fence completes, then destroys it. An error
// from the wait is returned (the event is still destroyed: a failed wait means nothing is
// still running that could record into it). Never call it for a fence on a stream that is
// recording a capture: the host wait would invalidate the capture.
func (f Fence) Wait() error {
	if f.p == nil {
		return nil
	}
	werr := f.p.EventSynchronize(f.ev)
	derr := f.p.EventDestroy(f.ev)
	if werr != nil {
		return stepError("wait for stream event", werr)
	}
	if derr != nil {
		return stepError("destroy a fence", derr)
	}
	return nil
}

// sync blocks until the fence completes, and done reports whether it has, without a
// wait: neither destroys it, so a query may meet a wait on another goroutine; destroy
// ends it. A zero Fence is complete.
func (f Fence) sync() error {
	if f.p == nil {
		return nil
	}
	return wrapStep("wait for stream event", f.p.EventSynchronize(f.ev))
}

func (f Fence) done() bool { return f.p == nil || f.p.EventQuery(f.ev) == nil }

func (f Fence) destroy() error {
	if f.p == nil {
		return nil
	}
	return wrapStep("destroy a fence", f.p.EventDestroy(f.ev))
}

// WaitOn makes stream wait on the device for the fence (no host wait), then destroys it;
// HIP keeps the wait valid after the event is destroyed.
func (f Fence) WaitOn(stream hipsys.Stream) error {
	if f.p == nil {
		return nil
	}
	werr := f.p.StreamWaitEvent(stream, f.ev, 0)
	derr := f.p.EventDestroy(f.ev)
	return errors.Join(wrapStep("wait on stream event", werr), wrapStep("destroy a fence", derr))
}

// Event is the fence's event, for a profiler that reads its timestamp.
func (f Fence) Event() hipsys.Event { return f.ev }

func wrapStep(step string, err error) error {
	if err == nil {
		return nil
	}
	return stepError(step, err)
}
