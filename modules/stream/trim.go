package stream

import "time"

// Each stream has device pools of its own, and a pool keeps the pages its buffers were
// carved from after they are released, for the stream's next allocations: CubeCL's
// pools give pages back only at an explicit cleanup (or, for some, after many more
// reservations on the same stream). A host that gives each of many threads a stream id
// of its own ends up with every stream's pages reserved, each kept for a thread that
// may never allocate again. TrimIdle bounds what the pools keep that way, by two rules:
//
//   - a stream whose pools have served no reservation for TrimPolicy.Idle gives back
//     its free pages (pages with no live buffer): they are memory that nothing is
//     about to use, what jemalloc's decay and Go's scavenger give back from idle heaps;
//   - when the device's pools together reserve more than twice the bytes in use plus
//     TrimPolicy.Slack, every stream gives back its free pages, busy ones included, as
//     PyTorch's caching allocator frees cached blocks past its garbage-collection
//     threshold: a pool that keeps pages for a busy stream costs it a new allocation per
//     page at most once per such trim.
//
// Neither rule ever frees memory a buffer, a queued command, a graph or a borrowing
// holds: only pages the pools themselves report free go (memory.Manager.Spare), and the
// free waits for the device first (hipFree synchronizes it). The idleness a rule infers
// is the pools' own count of reservations, read by their owner: a stream first seen, or
// seen to have reserved since the last look, counts as busy from that moment.

// TrimPolicy says when idle pools give their free pages back (see TrimIdle).
type TrimPolicy struct {
	// Idle is how long a stream's device pools must have served no reservation before
	// their free pages go. Zero trims every stream's free pages at each TrimIdle.
	Idle time.Duration
	// Slack is what the device's pools may reserve beyond twice the bytes in use before
	// every stream's free pages go.
	Slack uint64
}

// DefaultTrimPolicy gives a stream's free pages back once it has allocated nothing for
// a second: long enough that a stream serving requests in a steady loop keeps the
// pages it reuses, short enough that the stream of a thread that went quiet does not
// keep them for good. Its slack lets busy streams keep their pages unless the pools
// hold far more than is in use.
var DefaultTrimPolicy = TrimPolicy{Idle: time.Second, Slack: 256 << 20}

// WithTrimPolicy sets when TrimIdle gives idle pools' pages back (default
// DefaultTrimPolicy).
func WithTrimPolicy(p TrimPolicy) Option { return func(c *config) { c.trimPolicy = &p } }

// trimState is what TrimIdle remembers of each slot between calls.
type trimState struct {
	seen []trimSeen // per slot, allocated at the first TrimIdle
}

type trimSeen struct {
	known bool
	count uint64    // the device pools' reservations when last looked at
	since time.Time // when count was first seen at that value
}

// TrimIdle gives back the free pages of the device pools that the policy says are idle
// (see TrimPolicy), after giving back the borrowings of streams with nothing left to run
// (ReturnFinishedBorrowings), which may hold pages. A stream in a capture (prepared or
// recording) is left alone: its pools are the graph's working set. It returns how long
// until a stream that still holds free pages would be idle, so that the caller looks
// again then, or 0 when no stream holds free pages that a later call could give back
// without a release first.
//
// It reads and changes every stream's pools: the caller must be the one owner of all of
// them at once (the server's). It blocks while it frees: each free waits for the device.
func (m *MultiStream) TrimIdle(now time.Time) time.Duration {
	m.ReturnFinishedBorrowings()
	c := m.created.Load()
	if c == nil {
		return 0
	}
	pol := DefaultTrimPolicy
	if m.cfg.trimPolicy != nil {
		pol = *m.cfg.trimPolicy
	}
	if m.trim.seen == nil {
		m.trim.seen = make([]trimSeen, len(m.slots))
	}
	var next time.Duration
	var reserved, inUse uint64
	for _, id := range *c {
		s := m.slots[id].Load()
		if s == nil {
			continue
		}
		seen := &m.trim.seen[id]
		if n := s.GPU.Reservations(); !seen.known || n != seen.count {
			*seen = trimSeen{known: true, count: n, since: now}
		}
		if s.Capture.State() == CaptureNone && s.GPU.Spare() > 0 {
			if quiet := now.Sub(seen.since); quiet >= pol.Idle {
				s.GPU.Cleanup()
			} else if wait := pol.Idle - quiet; next == 0 || wait < next {
				next = wait
			}
		}
		u := s.GPU.Usage()
		reserved += u.BytesReserved
		inUse += u.BytesInUse
	}
	if reserved <= 2*inUse+pol.Slack {
		return next
	}
	for _, id := range *c {
		if s := m.slots[id].Load(); s != nil && s.Capture.State() == CaptureNone {
			s.GPU.Cleanup()
		}
	}
	return 0
}
