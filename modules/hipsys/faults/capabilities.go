package faults

import "github.com/cubehip/cubehip/modules/hipsys"

// The optional capabilities (hipsys/capability.go). The wrapper implements every one, so
// that hipsys.As finds the wrapper's and no call reaches the wrapped platform without
// passing the rules and the counters; each answers as the wrapped platform would, so the
// layers above take the same paths over the wrapper as over the platform alone. The
// launch queue is in queue.go, the live counts in live.go; capabilities_test.go fails
// when hipsys gains a capability the wrapper lacks.

var (
	_ hipsys.SmallReadStager = (*Platform)(nil)
	_ hipsys.FlaggingCopier  = (*Platform)(nil)
	_ hipsys.FlagWaiter      = (*Platform)(nil)
	_ hipsys.ForeignStreams  = (*Platform)(nil)
)

// OrdersForeignStreams answers as the wrapped platform does: false where it has none. It
// is no HIP call, so no rule fails it.
func (w *Platform) OrdersForeignStreams() bool {
	f, ok := hipsys.As[hipsys.ForeignStreams](w.inner)
	return ok && f.OrdersForeignStreams()
}

// ForeignEventRecord is the wrapped platform's; a rule on hipEventRecord fails it. A
// platform without foreign streams answers hipErrorNotSupported, as OrdersForeignStreams
// told the caller it would.
func (w *Platform) ForeignEventRecord(e hipsys.Event, s hipsys.Stream) error {
	if err := w.check(cEventRecord); err != nil {
		return err
	}
	f, ok := hipsys.As[hipsys.ForeignStreams](w.inner)
	if !ok || !f.OrdersForeignStreams() {
		return hipsys.NewError(w.inner.Name(), "hipEventRecord", hipsys.ErrorNotSupported, "no streams of other libraries")
	}
	return f.ForeignEventRecord(e, s)
}

// ForeignStreamWaitEvent is the wrapped platform's; a rule on hipStreamWaitEvent fails it.
func (w *Platform) ForeignStreamWaitEvent(s hipsys.Stream, e hipsys.Event) error {
	if err := w.check(cStreamWaitEvent); err != nil {
		return err
	}
	f, ok := hipsys.As[hipsys.ForeignStreams](w.inner)
	if !ok || !f.OrdersForeignStreams() {
		return hipsys.NewError(w.inner.Name(), "hipStreamWaitEvent", hipsys.ErrorNotSupported, "no streams of other libraries")
	}
	return f.ForeignStreamWaitEvent(s, e)
}

// ForeignStreamQuery is the wrapped platform's; a rule on hipStreamQuery fails it.
func (w *Platform) ForeignStreamQuery(s hipsys.Stream) error {
	if err := w.check(cStreamQuery); err != nil {
		return err
	}
	f, ok := hipsys.As[hipsys.ForeignStreams](w.inner)
	if !ok || !f.OrdersForeignStreams() {
		return hipsys.NewError(w.inner.Name(), "hipStreamQuery", hipsys.ErrorNotSupported, "no streams of other libraries")
	}
	return f.ForeignStreamQuery(s)
}

// StagesSmallReads answers as the wrapped platform does: false where it has no answer. It
// is no HIP call, so no rule fails it.
func (w *Platform) StagesSmallReads() bool {
	st, ok := hipsys.As[hipsys.SmallReadStager](w.inner)
	return ok && st.StagesSmallReads()
}

// MemcpyDtoHAsyncFlagged is the wrapped platform's, and where it flags no copies, its
// MemcpyDtoHAsync with token 0: no flag was queued, which the caller must already handle.
// It is failed by a rule on hipMemcpyDtoHAsyncFlagged or on hipMemcpyDtoHAsync.
func (w *Platform) MemcpyDtoHAsyncFlagged(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) (uint32, error) {
	if err := w.checkVariant(cMemcpyDtoHAsyncFlagged); err != nil {
		return 0, err
	}
	if fc, ok := hipsys.As[hipsys.FlaggingCopier](w.inner); ok {
		return fc.MemcpyDtoHAsyncFlagged(dst, src, size, s)
	}
	return 0, w.inner.MemcpyDtoHAsync(dst, src, size, s)
}

// StreamWaitFlag is the wrapped platform's, and where it has no flags, StreamSynchronize,
// which waits for at least what the token covers. It is failed by a rule on
// hipStreamWaitFlag or on hipStreamSynchronize.
func (w *Platform) StreamWaitFlag(s hipsys.Stream, token uint32) error {
	if err := w.checkVariant(cStreamWaitFlag); err != nil {
		return err
	}
	if fw, ok := hipsys.As[hipsys.FlagWaiter](w.inner); ok {
		return fw.StreamWaitFlag(s, token)
	}
	return w.inner.StreamSynchronize(s)
}
