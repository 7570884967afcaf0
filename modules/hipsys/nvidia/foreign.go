package nvidia

// #include "trampolines.h"
import "C"

import "github.com/cubehip/cubehip/modules/hipsys"

// OrdersForeignStreams is true: the driver takes any stream of the context (hipsys.ForeignStreams).
func (p *Platform) OrdersForeignStreams() bool { return true }

// ForeignEventRecord records e on s, a stream another library created (hipsys.ForeignStreams).
func (p *Platform) ForeignEventRecord(e hipsys.Event, s hipsys.Stream) error {
	const call = "hipEventRecord"
	if err := p.checkEvent(call, e); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_event_record(C.uintptr_t(e), C.uintptr_t(s))))
}

// ForeignStreamWaitEvent makes s, a stream another library created, wait for e
// (hipsys.ForeignStreams). NullStream, 1 (CU_STREAM_LEGACY) and 2 (CU_STREAM_PER_THREAD)
// are the driver's own implicit streams, which it takes as any other.
func (p *Platform) ForeignStreamWaitEvent(s hipsys.Stream, e hipsys.Event) error {
	const call = "hipStreamWaitEvent"
	if err := p.checkEvent(call, e); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_stream_wait_event(C.uintptr_t(s), C.uintptr_t(e), 0)))
}

// ForeignStreamQuery is cuStreamQuery of s, a stream another library created (or one of
// the driver's implicit streams) (hipsys.ForeignStreams).
func (p *Platform) ForeignStreamQuery(s hipsys.Stream) error {
	return cuError("hipStreamQuery", int32(C.cu_stream_query(C.uintptr_t(s))))
}

var _ hipsys.ForeignStreams = (*Platform)(nil)
