package stream

import "github.com/cubehip/cubehip/modules/memory"

// Scope is one write scope (the seed's ExecuteScope): the bookkeeping that makes a
// failure land on the buffers the failed work would have written. Every entry point that
// writes device memory runs its work inside one; a path that forgot it would be silent.
//
// Build one with [MultiStream.Over] (a write: a host copy, a graph replay) or
// [MultiStream.Launching] (a kernel launch, which also checks its inputs), and run it
// once with Execute. The scope does not keep the slices it is given past Execute.
type Scope struct {
	m       *MultiStream
	stream  ID
	reads   []Binding
	written []Binding
	check   bool
}

// Over is a scope over written, with no input check.
func (m *MultiStream) Over(stream ID, written []Binding) Scope {
	return Scope{m: m, stream: stream, written: written}
}

// Launching is a launch's scope: reads are the buffers whose bytes the kernel reads (an
// in-place buffer among them: bytes nothing wrote are no input), written the buffers it
// writes. A buffer in both that carries a failure keeps it; a host write, or a launch
// that only writes it, recovers it.
func (m *MultiStream) Launching(stream ID, reads, written []Binding) Scope {
	return Scope{m: m, stream: stream, reads: reads, written: written, check: true}
}

// Execute runs body inside the scope, in the seed's order:
//
//  1. (Launching only) an input that carries a failure skips body; the outputs take that
//     failure, since whatever they held is not what this launch would have written, and
//     the failure hook runs.
//  2. The outputs are claimed, replacing any earlier claim or failure on them.
//  3. While the stream records a capture, the outputs join the capture's write set, an
//     input claimed by this capture's earlier recorded work counts as written, and on
//     success the outputs keep a claim (ErrRecorded) until the capture ends.
//  4. body runs. If it panics, the panic goes on and the claim stays: a read of the
//     outputs then fails rather than returning bytes nothing wrote.
//  5. The outputs are marked as last written by this stream, whatever body returned,
//     so a command on another stream waits for this work (see Resolve); after a
//     failure, only those this stream was ordered after the last write of (a refused
//     cross-stream wait leaves the others' last write where it was).
//  6. Success releases the outputs (the work was enqueued); failure taints them with
//     body's error and runs the failure hook.
//
// Execute returns body's error (or the input's failure). Settling happens at enqueue
// time: a fault the device reports later surfaces from fence waits, not from here.
//
// Execute is Begin, body, then End (or Abandon if body panics): a caller that would
// rather not hand the scope a closure calls those itself, and its work then reads top
// to bottom in its own package.
func (s Scope) Execute(body func() error) error {
	o, err := s.Begin()
	if err != nil {
		return err
	}
	settled := false
	defer func() {
		if !settled {
			o.Abandon()
		}
	}()
	err = body()
	settled = true
	return o.End(err)
}

// Open is a scope between Begin and End: steps 1 to 3 of Execute are done, the work
// (step 4) is the caller's, and End does steps 5 and 6. Exactly one of End and Abandon
// must be called, on the goroutine that called Begin.
type Open struct {
	s         Scope
	st        *Stream
	recording bool
	claimed   bool
	priors    map[memory.ID]error
}

// Begin does steps 1 to 3 of Execute. An error is the failure an input carries (step
// 1): the outputs carry it already, the work must not run, and neither End nor Abandon
// is called.
func (s Scope) Begin() (Open, error) {
	f := &s.m.failures
	st := s.m.TryStream(s.stream)
	recording := st != nil && st.Capture.IsRecording()
	if s.check {
		var err error
		if recording {
			err = f.ensureWrittenFor(s.reads, st.slot)
		} else {
			err = f.EnsureWritten(s.reads)
		}
		if err != nil {
			s.m.FailedWriting(s.stream, s.written, err)
			return Open{}, err
		}
	}
	// A recording's claim must not erase a failure an output carries: the recorded work
	// does not run, so the end of the capture puts it back (setRecorded).
	var priors map[memory.ID]error
	if recording {
		priors = f.recordedPriors(s.written, st.slot)
	}
	// The claim replaces whatever the outputs carry. With an empty store there is
	// nothing to replace, and the claim is written only if the work panics (Abandon):
	// the store is read by no one while the work runs on this goroutine (the stream's
	// owner), so the one claim anybody can observe is the one a panic leaves, and the
	// steady-state launch takes no lock at all.
	claimed := f.n.Load() != 0
	if claimed {
		f.Claim(s.written)
	}
	if st != nil {
		st.Capture.Record(s.written)
	}
	return Open{s: s, st: st, recording: recording, claimed: claimed, priors: priors}, nil
}

// Abandon is End for work that panicked: the outputs stay claimed, so a read of them
// fails rather than returning bytes nothing wrote, and nothing is marked.
func (o Open) Abandon() {
	if !o.claimed {
		o.s.m.failures.Claim(o.s.written)
	}
}

// End does steps 5 and 6 of Execute for the work's error err, and returns err.
func (o Open) End(err error) error {
	s, st, f := o.s, o.st, &o.s.m.failures
	if st == nil {
		// The work may have created the stream; the write order must know it either way.
		st = s.m.TryStream(s.stream)
	}
	if st != nil && len(s.written) > 0 {
		// Marked whatever the work returned: a failure may come after part of the work
		// was enqueued, and a needless wait costs less than a missing one. The mark
		// takes a fresh cursor, above any done cursor another stream may already have
		// waited for, so the write is waited for even when the work enqueued it without
		// resolving (a replay); the work is all enqueued now, so the cursor is done too.
		written := s.written
		if err != nil {
			written = s.m.orderedOutputs(st, written)
		}
		c := st.cursor.Add(1)
		s.m.marks.wrote(st, written, c)
		st.done.Store(c)
	}
	if err != nil {
		s.m.FailedWriting(s.stream, s.written, err)
		return err
	}
	if o.recording {
		// Recorded, not run: until the capture ends, a reader of the outputs is told
		// so rather than handed bytes the recorded work has not written.
		f.setRecorded(st.slot, s.written, o.priors)
		return nil
	}
	f.Release(s.written)
	return nil
}

// FailedWriting is CubeCL's failed_writing: written take err, and the failure hook
// (which invalidates every open profiling window) runs; while the stream records a
// capture, the capture is failed too, and its graph will be refused. Used where work that would have
// written buffers cannot run at all: a compile failure, a dynamic count that cannot be
// read, a graph whose stream wait failed.
func (m *MultiStream) FailedWriting(stream ID, written []Binding, err error) {
	if err == nil {
		return
	}
	if st := m.TryStream(stream); st != nil {
		st.Capture.fail(err) // recorded work that failed: its graph is refused
	}
	m.failures.Taint(err, written)
	if h := m.onFailure; h != nil {
		h(stream, err)
	}
}

// EnsureWritten returns the failure or claim the first of bs carries, nil if all were
// written. Safe for concurrent use; see [Failures].
func (m *MultiStream) EnsureWritten(bs ...Binding) error { return m.failures.EnsureWritten(bs) }

// Taint records err on every allocation in bs, without running the failure hook (as the
// seed's end_capture does for a refused graph).
func (m *MultiStream) Taint(err error, bs ...Binding) { m.failures.Taint(err, bs) }

// Failures is the server-wide failure store.
func (m *MultiStream) Failures() *Failures { return &m.failures }
