package stream

// Quick is the write scope's fast path for the command nearly every launch is: one
// whose scope and resolve would do nothing but advance cursors. That holds when
//
//   - no allocation carries a failure or a claim (the store is empty), so there is no
//     input to check, no output claim to replace and none to release;
//   - no write away from an allocation's home stream is marked, and every buffer lives
//     on the command's own stream's pools, so there is no wait to enqueue, no buffer to
//     pin and, the outputs being written at home, no mark to keep (see marks.wrote);
//   - the stream exists and no capture is being prepared or recorded on it, so there is
//     nothing to record and the info cache runs in its normal mode.
//
// Then Quick advances the stream's cursor as Resolve does and returns the stream; the
// caller enqueues its work and ends with QuickDone, and on a failure taints its outputs
// with FailedWriting, as Execute would. Otherwise Quick returns nil and changes nothing:
// the caller takes the full path (Launching, Execute, Resolve).
//
// Why a fast path at all: on a GPU the driver's launch call evicts the CPU caches, and
// every cache line a launch touches besides is a miss; the scope's closure, the resolve
// and their frames were a large part of the server's cost per launch (docs/benchmarks.md,
// "The stream's quick path"). The conditions are each one word already in cache for the checks.
func (m *MultiStream) Quick(id ID, bs []Binding) *Stream {
	if m.failures.n.Load() != 0 || m.marks.foreign.Load() != 0 {
		return nil
	}
	s := m.TryStream(id)
	if s == nil || s.Capture.state != CaptureNone {
		return nil
	}
	for i := range bs {
		if m.slotOf(bs[i].Stream) != s.slot {
			return nil
		}
	}
	s.cursor.Add(1)
	return s
}

// QuickDone ends a command Quick admitted, whatever its work returned: its work is
// enqueued, so other streams may order after it (Resolved.Close), and when it wrote
// buffers the done cursor moves to a fresh one, above any another stream has already
// waited for, as Execute's mark does. The stream's cursors end exactly where the full
// path leaves them.
func (s *Stream) QuickDone(wrote bool) {
	c := s.cursor.Load()
	if wrote {
		c = s.cursor.Add(1)
	}
	s.done.Store(c)
}
