package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func (p *Platform) checkEvent(call string, e hipsys.Event) error {
	if p.events.has(uintptr(e)) {
		return nil
	}
	return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("event %#x", uintptr(e)))
}

// EventCreateWithFlags creates an event; HIP's event flags have CUDA's numbers.
func (p *Platform) EventCreateWithFlags(flags hipsys.EventFlags) (hipsys.Event, error) {
	const call = "hipEventCreateWithFlags"
	const known = hipsys.EventBlockingSync | hipsys.EventDisableTiming | hipsys.EventInterprocess
	if flags&^known != 0 {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("flags %#x", uint32(flags)))
	}
	var e C.uintptr_t
	if err := cuError(call, int32(C.cu_event_create(&e, C.uint(flags)))); err != nil {
		return 0, err
	}
	p.events.put(uintptr(e), struct{}{})
	return hipsys.Event(e), nil
}

// EventRecord marks the event in stream.
func (p *Platform) EventRecord(e hipsys.Event, s hipsys.Stream) error {
	const call = "hipEventRecord"
	if err := p.checkEvent(call, e); err != nil {
		return err
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_event_record(C.uintptr_t(e), C.uintptr_t(s))))
}

// EventQuery is nil once the event has completed, hipErrorNotReady before.
func (p *Platform) EventQuery(e hipsys.Event) error {
	const call = "hipEventQuery"
	if err := p.checkEvent(call, e); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_event_query(C.uintptr_t(e))))
}

// EventSynchronize blocks until the event has completed.
func (p *Platform) EventSynchronize(e hipsys.Event) error {
	const call = "hipEventSynchronize"
	if err := p.checkEvent(call, e); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_event_sync(C.uintptr_t(e))))
}

// EventElapsedTime is the milliseconds between two completed timing events.
func (p *Platform) EventElapsedTime(start, stop hipsys.Event) (float32, error) {
	const call = "hipEventElapsedTime"
	if err := p.checkEvent(call, start); err != nil {
		return 0, err
	}
	if err := p.checkEvent(call, stop); err != nil {
		return 0, err
	}
	var ms C.float
	if err := cuError(call, int32(C.cu_event_elapsed(&ms, C.uintptr_t(start), C.uintptr_t(stop)))); err != nil {
		return 0, err
	}
	return float32(ms), nil
}

// EventDestroy destroys the event; the handle is invalid at once.
func (p *Platform) EventDestroy(e hipsys.Event) error {
	const call = "hipEventDestroy"
	if _, ok := p.events.take(uintptr(e)); !ok {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("event %#x", uintptr(e)))
	}
	return cuError(call, int32(C.cu_event_destroy(C.uintptr_t(e))))
}
