package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// StreamCreateWithFlags creates a stream on the current device; hipStreamNonBlocking is
// CU_STREAM_NON_BLOCKING (both 1). The handle is the CUstream itself.
func (p *Platform) StreamCreateWithFlags(flags hipsys.StreamFlags) (hipsys.Stream, error) {
	const call = "hipStreamCreateWithFlags"
	if flags&^hipsys.StreamNonBlocking != 0 {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("flags %#x", uint32(flags)))
	}
	var s C.uintptr_t
	if err := cuError(call, int32(C.cu_stream_create(&s, C.uint(flags)))); err != nil {
		return 0, err
	}
	p.streams.put(uintptr(s), struct{}{})
	p.giveFlag(uintptr(s))
	return hipsys.Stream(s), nil
}

// StreamQuery is nil when the stream's work is done, hipErrorNotReady while some is
// pending.
func (p *Platform) StreamQuery(s hipsys.Stream) error {
	const call = "hipStreamQuery"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_stream_query(C.uintptr_t(s))))
}

// StreamSynchronize blocks until the stream's work is done.
func (p *Platform) StreamSynchronize(s hipsys.Stream) error {
	const call = "hipStreamSynchronize"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_stream_sync(C.uintptr_t(s))))
}

// StreamWaitEvent makes the stream's later work wait for event's completion.
func (p *Platform) StreamWaitEvent(s hipsys.Stream, e hipsys.Event, flags uint32) error {
	const call = "hipStreamWaitEvent"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if err := p.checkEvent(call, e); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_stream_wait_event(C.uintptr_t(s), C.uintptr_t(e), C.uint(flags))))
}

// StreamDestroy destroys the stream once its queued work completes (the driver's
// semantics); the handle is invalid at once. The null stream cannot be destroyed.
func (p *Platform) StreamDestroy(s hipsys.Stream) error {
	const call = "hipStreamDestroy"
	if _, ok := p.streams.take(uintptr(s)); !ok {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("stream %#x", uintptr(s)))
	}
	p.takeFlag(uintptr(s))
	return cuError(call, int32(C.cu_stream_destroy(C.uintptr_t(s))))
}
