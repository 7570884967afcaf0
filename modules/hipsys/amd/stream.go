package amd

// #include "trampolines.h"
import "C"

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

// Not-ready answers are the common case of a polling loop; they are built once so that
// polling allocates nothing. Callers must not modify them.
var (
	streamNotReady = hipsys.NewError(name, "hipStreamQuery", hipsys.ErrorNotReady, "")
	eventNotReady  = hipsys.NewError(name, "hipEventQuery", hipsys.ErrorNotReady, "")
)

// stream checks that s is the null stream or a live stream of this platform.
func (p *Platform) stream(call string, s hipsys.Stream) error {
	if s == hipsys.NullStream || p.streams.has(uintptr(s)) {
		return nil
	}
	return badHandle(call, "stream")
}

func (p *Platform) event(call string, e hipsys.Event) error {
	if e != 0 && p.events.has(uintptr(e)) {
		return nil
	}
	return badHandle(call, "event")
}

// StreamCreateWithFlags is hipStreamCreateWithFlags on the current device.
func (p *Platform) StreamCreateWithFlags(flags hipsys.StreamFlags) (hipsys.Stream, error) {
	var s C.uintptr_t
	if err := check("hipStreamCreateWithFlags", C.amdt_create(p.lib.s.streamCreateWithFlags, &s, C.unsigned(flags))); err != nil {
		return 0, err
	}
	p.streams.add(uintptr(s), 0)
	return hipsys.Stream(s), nil
}

// StreamQuery is hipStreamQuery: nil when the stream is idle, ErrorNotReady while not.
func (p *Platform) StreamQuery(s hipsys.Stream) error {
	if err := p.stream("hipStreamQuery", s); err != nil {
		return err
	}
	r := C.amdt_h(p.lib.s.streamQuery, C.uintptr_t(s))
	if hipStatus(r) == hipsys.ErrorNotReady {
		return streamNotReady
	}
	return check("hipStreamQuery", r)
}

// StreamSynchronize is hipStreamSynchronize; it blocks until the stream is idle.
func (p *Platform) StreamSynchronize(s hipsys.Stream) error {
	if err := p.stream("hipStreamSynchronize", s); err != nil {
		return err
	}
	return check("hipStreamSynchronize", C.amdt_h(p.lib.s.streamSynchronize, C.uintptr_t(s)))
}

// StreamWaitEvent is hipStreamWaitEvent: work queued on s later waits for e.
func (p *Platform) StreamWaitEvent(s hipsys.Stream, e hipsys.Event, flags uint32) error {
	const call = "hipStreamWaitEvent"
	if err := p.stream(call, s); err != nil {
		return err
	}
	if err := p.event(call, e); err != nil {
		return err
	}
	return check(call, C.amdt_hhu(p.lib.s.streamWaitEvent, C.uintptr_t(s), C.uintptr_t(e), C.unsigned(flags)))
}

// StreamDestroy is hipStreamDestroy; the null stream cannot be destroyed.
func (p *Platform) StreamDestroy(s hipsys.Stream) error {
	if s == hipsys.NullStream || !p.streams.remove(uintptr(s)) {
		return badHandle("hipStreamDestroy", "stream")
	}
	return check("hipStreamDestroy", C.amdt_h(p.lib.s.streamDestroy, C.uintptr_t(s)))
}

// EventCreateWithFlags is hipEventCreateWithFlags.
func (p *Platform) EventCreateWithFlags(flags hipsys.EventFlags) (hipsys.Event, error) {
	var e C.uintptr_t
	if err := check("hipEventCreateWithFlags", C.amdt_create(p.lib.s.eventCreateWithFlags, &e, C.unsigned(flags))); err != nil {
		return 0, err
	}
	p.events.add(uintptr(e), 0)
	return hipsys.Event(e), nil
}

// EventRecord is hipEventRecord: e completes when s reaches this point.
func (p *Platform) EventRecord(e hipsys.Event, s hipsys.Stream) error {
	const call = "hipEventRecord"
	if err := p.event(call, e); err != nil {
		return err
	}
	if err := p.stream(call, s); err != nil {
		return err
	}
	return check(call, C.amdt_hh(p.lib.s.eventRecord, C.uintptr_t(e), C.uintptr_t(s)))
}

// EventQuery is hipEventQuery: nil once e has completed, ErrorNotReady before.
func (p *Platform) EventQuery(e hipsys.Event) error {
	if err := p.event("hipEventQuery", e); err != nil {
		return err
	}
	r := C.amdt_h(p.lib.s.eventQuery, C.uintptr_t(e))
	if hipStatus(r) == hipsys.ErrorNotReady {
		return eventNotReady
	}
	return check("hipEventQuery", r)
}

// EventSynchronize is hipEventSynchronize; it blocks until e has completed.
func (p *Platform) EventSynchronize(e hipsys.Event) error {
	if err := p.event("hipEventSynchronize", e); err != nil {
		return err
	}
	return check("hipEventSynchronize", C.amdt_h(p.lib.s.eventSynchronize, C.uintptr_t(e)))
}

// EventElapsedTime is hipEventElapsedTime in milliseconds between two completed events.
func (p *Platform) EventElapsedTime(start, stop hipsys.Event) (float32, error) {
	const call = "hipEventElapsedTime"
	if err := p.event(call, start); err != nil {
		return 0, err
	}
	if err := p.event(call, stop); err != nil {
		return 0, err
	}
	var ms C.float
	if err := check(call, C.amdt_elapsed(p.lib.s.eventElapsedTime, &ms, C.uintptr_t(start), C.uintptr_t(stop))); err != nil {
		return 0, err
	}
	return float32(ms), nil
}

// EventDestroy is hipEventDestroy.
func (p *Platform) EventDestroy(e hipsys.Event) error {
	if e == 0 || !p.events.remove(uintptr(e)) {
		return badHandle("hipEventDestroy", "event")
	}
	return check("hipEventDestroy", C.amdt_h(p.lib.s.eventDestroy, C.uintptr_t(e)))
}
