package cpu

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

// StreamCreateWithFlags starts a new stream (its worker goroutine). Flags are
// StreamDefault or StreamNonBlocking; anything else is hipErrorInvalidValue.
func (p *Platform) StreamCreateWithFlags(flags hipsys.StreamFlags) (hipsys.Stream, error) {
	if flags&^hipsys.StreamNonBlocking != 0 {
		return 0, errorf("hipStreamCreateWithFlags", hipsys.ErrorInvalidValue, "unknown stream flags")
	}
	kind := streamBlocking
	if flags&hipsys.StreamNonBlocking != 0 {
		kind = streamNonBlocking
	} else {
		p.blocking.Add(1)
	}
	s := newStream(p, kind)
	s.dev = p.devices.currentDevice()
	return hipsys.Stream(p.streams.add(s)), nil
}

// StreamQuery is nil when everything queued on the stream has finished and
// hipErrorNotReady while something is pending; once the stream is idle, an asynchronous
// failure of its work is returned instead (without acknowledging it: see the package
// doc). It does not block. On a capturing stream it is illegal and invalidates the
// capture, as in HIP.
func (p *Platform) StreamQuery(h hipsys.Stream) error {
	const call = "hipStreamQuery"
	s, err := p.stream(call, h)
	if err != nil {
		return err
	}
	if err := s.refuseWhileCapturing(call); err != nil {
		return err
	}
	idle, failure := s.idleNow()
	if !idle {
		return errStreamNotReady
	}
	if failure != nil {
		return asyncError(call, failure)
	}
	return nil
}

// errStreamNotReady is preallocated: polling a stream is a hot loop, and its answer
// should cost no allocation.
var errStreamNotReady = errorf("hipStreamQuery", hipsys.ErrorNotReady, "")

// StreamSynchronize blocks until the work queued on the stream before the call has
// finished. It returns the first asynchronous failure (a kernel that could not run on
// the worker) since the stream's last StreamSynchronize or DeviceSynchronize and
// acknowledges it: a later synchronize returns nil again (see the package doc).
// On a capturing stream it is hipErrorStreamCaptureUnsupported and invalidates the
// capture.
func (p *Platform) StreamSynchronize(h hipsys.Stream) error {
	const call = "hipStreamSynchronize"
	s, err := p.stream(call, h)
	if err != nil {
		return err
	}
	if err := s.refuseWhileCapturing(call); err != nil {
		return err
	}
	if err := s.synchronize(); err != nil {
		return asyncError(call, err)
	}
	return nil
}

// StreamWaitEvent makes work queued on the stream after the call wait until the
// event's latest record (as of the call) has completed, on whichever stream it was
// recorded. It does not block the caller. flags must be 0. Waiting on an event never
// recorded is a no-op, as in HIP.
func (p *Platform) StreamWaitEvent(h hipsys.Stream, e hipsys.Event, flags uint32) error {
	const call = "hipStreamWaitEvent"
	s, err := p.stream(call, h)
	if err != nil {
		return err
	}
	ev := p.events.get(uintptr(e))
	if ev == nil {
		return errorf(call, hipsys.ErrorInvalidHandle, "unknown or destroyed event")
	}
	if flags != 0 {
		return errorf(call, hipsys.ErrorInvalidValue, "flags must be 0")
	}
	t := command{kind: cmdWaitEvent, ev: ev}
	return s.enqueue(call, &t)
}

// StreamDestroy forgets the stream. Work already queued on it still runs to the end (as
// HIP lets it), after which the worker exits; the call does not wait for it. A capture in
// progress on the stream is abandoned. The null stream cannot be destroyed.
func (p *Platform) StreamDestroy(h hipsys.Stream) error {
	const call = "hipStreamDestroy"
	if h == hipsys.NullStream {
		return errorf(call, hipsys.ErrorInvalidHandle, "the null stream cannot be destroyed")
	}
	s := p.streams.remove(uintptr(h))
	if s == nil {
		return errorf(call, hipsys.ErrorInvalidHandle, "unknown or destroyed stream")
	}
	if s.kind == streamBlocking {
		p.blocking.Add(-1)
	}
	s.mu.Lock()
	c := s.capture
	s.capture = nil
	s.mu.Unlock()
	if c != nil {
		p.endCapture(c)
	}
	p.retiredMu.Lock()
	p.retired[s] = struct{}{}
	p.retiredMu.Unlock()
	s.shutdown()
	return nil
}
