package stream

// When borrowings come back. A buffer that commands of another stream used stays held
// by those commands until their work is done (order.go): its memory goes back to its
// pool only then, even when its owner released it long before. Closed commands' holds
// wait for one fence per pinBatch commands (Stream.FencePins), so a stream that borrows
// a few times and then stops keeps what it borrowed until something records that fence.
// The two calls below are the points where the holds end without one:
//
//   - ReturnFinishedBorrowings, which a wait or a memory figure calls: every stream
//     whose work is all done, as the driver says (a stream query), gives its holds back
//     at once, and so does every fence handed to the release worker that has completed.
//     A stream still working keeps them: nothing here waits, and no fence is recorded on
//     a stream that is busy, which would put an event between its kernels.
//   - FenceBorrowings and SettleBorrowings, which a cleanup calls: every hold gets its
//     fence now, and with SettleBorrowings the caller may wait until the release worker
//     has given back every hold handed to it so far, so that the cleanup finds the
//     memory free.
//
// Both read and change every stream's state: the caller must be the one owner of all of
// them at once (the server's). Both skip a stream that records a capture: a query there
// would be refused and a fence would be a node of the graph; its holds wait for the
// capture's end.

// ReturnFinishedBorrowings gives back, on the caller's goroutine, the borrowings whose
// work is known done without a wait: those handed to the release worker whose fence has
// completed (the worker, which takes them in order, may not have reached them), and
// those of every stream with nothing left to run (the driver reports the stream idle, so
// the work of every closed command on it is done). A fence or stream the query does not
// report done (still working, or failed: the worker then leaks them) keeps its
// borrowings, as if the query had not been made. No wait, no fence; with nothing held it
// reads two counters.
func (m *MultiStream) ReturnFinishedBorrowings() {
	m.rel.returnCompleted()
	if m.lending.Load() == 0 {
		return
	}
	c := m.created.Load()
	if c == nil {
		return
	}
	for _, id := range *c {
		s := m.slots[id].Load()
		if s == nil || !s.lending() {
			continue
		}
		if m.p.StreamQuery(s.Sys) == nil {
			s.returnDeferred()
		}
	}
}

// FenceBorrowings ends every stream's wait for a fence: a stream with nothing left to
// run gives its borrowings back at once (as ReturnFinishedBorrowings), any other records
// its fence and hands them to the release worker (FencePins), which gives them back
// once the fence completes. Nothing is waited for; the handover may block as
// FencePins's does.
func (m *MultiStream) FenceBorrowings() {
	if m.lending.Load() == 0 {
		return
	}
	c := m.created.Load()
	if c == nil {
		return
	}
	for _, id := range *c {
		s := m.slots[id].Load()
		if s == nil || !s.lending() {
			continue
		}
		if m.p.StreamQuery(s.Sys) == nil {
			s.returnDeferred()
			continue
		}
		_ = s.FencePins()
	}
}

// SettleBorrowings is FenceBorrowings, and a channel that closes once the release
// worker has settled every batch handed to it so far, these included: after it, every
// borrowing whose work completed is given back, and only the borrowings of work that
// failed on the device are kept (the worker leaks those, see releaser.settle).
func (m *MultiStream) SettleBorrowings() <-chan struct{} {
	m.FenceBorrowings()
	return m.rel.barrier()
}

// lending reports whether the stream holds borrowings that wait for a fence, outside a
// capture.
func (s *Stream) lending() bool {
	d := s.deferred
	return d != nil && len(d.pins) > 0 && !s.Capture.IsRecording()
}

// returnDeferred releases the stream's borrowings that wait for a fence: the caller
// knows their work is done. The release hook runs as after the worker's releases: a
// binding released here may have been an imported buffer's last use.
func (s *Stream) returnDeferred() {
	d := s.deferred
	for i := range d.pins {
		_ = d.pins[i].Release()
	}
	clear(d.pins)
	d.pins, d.cmds = d.pins[:0], 0
	s.m.lending.Add(-1)
	if f := s.m.rel.after.Load(); f != nil {
		(*f)()
	}
}
