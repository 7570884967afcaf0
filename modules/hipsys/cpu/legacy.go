package cpu

// streamKind is how a stream orders itself against the null stream.
type streamKind uint8

const (
	// streamNull is HIP's null stream, which (as CUDA's legacy default stream) runs
	// each command after the work already queued on every blocking stream.
	streamNull streamKind = iota
	// streamBlocking is a stream created with StreamDefault: each command runs after
	// the work already queued on the null stream.
	streamBlocking
	// streamNonBlocking (StreamNonBlocking) has no implicit ordering with the null
	// stream; CubeCL creates only these, so its launches pay nothing for the rule.
	streamNonBlocking
)

// nullDependency is, for a blocking stream, the null stream's last queued command if it
// is still pending (0 otherwise). It is read before the caller locks its own stream,
// so that no goroutine ever holds a blocking stream's lock while taking the null
// stream's: the null stream's side (legacyWaits) takes them in the other order.
func (s *stream) nullDependency() uint64 {
	if s.kind != streamBlocking {
		return 0
	}
	null := s.p.null.Load()
	if null == nil {
		return 0
	}
	null.mu.Lock()
	defer null.mu.Unlock()
	if null.completed < null.submitted {
		return null.submitted
	}
	return 0
}

// legacyWaits queues the implicit waits of HIP's legacy null stream ahead of the next
// command. The caller holds s.mu. A wait names only commands queued before it, on
// either side, so two streams can never wait on each other in a cycle.
func (s *stream) legacyWaits(nullSeq uint64) {
	switch {
	case s.kind == streamBlocking && nullSeq > 0:
		c := s.take()
		c.kind, c.target, c.seq = cmdWait, s.p.null.Load(), nullSeq
		s.push(c)
	case s.kind == streamNull && s.p.blocking.Load() > 0:
		h := &s.p.streams
		h.mu.RLock()
		defer h.mu.RUnlock()
		for _, t := range h.m {
			if t.kind != streamBlocking {
				continue
			}
			t.mu.Lock()
			seq, pending := t.submitted, t.completed < t.submitted
			t.mu.Unlock()
			if pending {
				c := s.take()
				c.kind, c.target, c.seq = cmdWait, t, seq
				s.push(c)
			}
		}
	}
}
