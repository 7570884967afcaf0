package amd

// #include "trampolines.h"
import "C"

import "github.com/cubehip/cubehip/modules/hipsys"

// OrdersForeignStreams is true: the driver takes any stream of the context (hipsys.ForeignStreams).
func (p *Platform) OrdersForeignStreams() bool { return true }

// ForeignEventRecord records e on s, a stream another library created (hipsys.ForeignStreams).
func (p *Platform) ForeignEventRecord(e hipsys.Event, s hipsys.Stream) error {
	const call = "hipEventRecord"
	if err := p.event(call, e); err != nil {
		return err
	}
	return check(call, C.amdt_hh(p.lib.s.eventRecord, C.uintptr_t(e), C.uintptr_t(s)))
}

// ForeignStreamWaitEvent makes s, a stream another library created, wait for e
// (hipsys.ForeignStreams); NullStream is the null stream.
func (p *Platform) ForeignStreamWaitEvent(s hipsys.Stream, e hipsys.Event) error {
	const call = "hipStreamWaitEvent"
	if err := p.event(call, e); err != nil {
		return err
	}
	return check(call, C.amdt_hhu(p.lib.s.streamWaitEvent, C.uintptr_t(s), C.uintptr_t(e), 0))
}

// ForeignStreamQuery is hipStreamQuery of s, a stream another library created; NullStream
// is the null stream (hipsys.ForeignStreams).
func (p *Platform) ForeignStreamQuery(s hipsys.Stream) error {
	r := C.amdt_h(p.lib.s.streamQuery, C.uintptr_t(s))
	if hipStatus(r) == hipsys.ErrorNotReady {
		return streamNotReady
	}
	return check("hipStreamQuery", r)
}

var _ hipsys.ForeignStreams = (*Platform)(nil)
