package compute

import (
	"fmt"
	"math"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server/compute/internal/ledger"
)

// What the server does with what its waits learn. The ledger (internal/ledger) holds,
// per device stream, the writes no wait has confirmed and the streams each was ordered
// after; this file turns a wait's outcome into the buffers' fates: a success confirms,
// a failure leaves the unconfirmed writes carrying it (through the stream layer's
// failure store, under the device stream's id), acknowledges it, and asks the streams
// the failure may have come from.

// writePending reports whether a write of allocation id waits for a confirmation on
// some stream, or was taken by a failed wait and not yet marked.
func (s *Server) writePending(id memory.ID) bool { return s.ledger.Pending(id) }

// streamWaitFailed is the queue watch's report that a stream-wide wait on sys, made
// inside a server call, failed. The device reports an asynchronous failure at such a
// wait, and the cpu device forgets it once a stream-wide wait has reported it: unless
// the stream's unconfirmed writes are taken now, the faulted work's output would read
// as written. They are taken here and marked at the next call (carryLateFailures).
func (s *Server) streamWaitFailed(sys hipsys.Stream, err error) {
	werr := s.ledger.FailLate(s.ledger.Of(sys), func(id StreamID, k *string) error {
		if k != nil {
			return fmt.Errorf("compute: a wait for stream %d failed (the last kernel launched there: %s): %w", id, *k, err)
		}
		return fmt.Errorf("compute: a wait for stream %d failed: %w", id, err)
	})
	s.noteFault(werr)
}

// carryLateFailures marks the writes that failed stream-wide waits took (see
// streamWaitFailed) as carrying their failure. The caller holds the owner's lock; a
// call pays one atomic load when there are none.
func (s *Server) carryLateFailures() {
	for _, f := range s.ledger.TakeLate() {
		s.streams.FailedWriting(f.On.ID(), f.Writes, f.Err)
	}
}

// failWait leaves what fail takes carrying err (taking the owner's lock unless the
// caller holds it, locked), then acknowledges the failure with a synchronization of the
// stream, when it does not record a capture (a host wait would invalidate it). A
// device that is not damaged by a fault (the cpu device) reports it at every later wait
// until that acknowledgement, which would fail the stream's later, unrelated work; the
// failure is now carried by the buffers it belongs to. A GPU's fault is sticky: there
// every later call fails anyway, with an error, never with wrong bytes.
func (s *Server) failWait(id StreamID, q *ledger.Stream, point uint64, err error, locked bool) {
	s.failWaitFrom(id, q, point, err, locked, map[*ledger.Stream]bool{})
}

// failWaitFrom is failWait, and then the same for the streams q was ordered after since
// its last successful wait, where the failure may have come from (a GPU stops every
// stream at a fault, and the cpu device passes a failure on through a cross-stream
// wait, so a stream's wait may report another's fault): each is asked with the driver's
// own wait, and one that fails is failed in turn, the one that succeeds confirmed. seen
// keeps a stream from being asked twice. The streams ordered after q's work take the
// failure too (failOrdered), before any of those waits.
func (s *Server) failWaitFrom(id StreamID, q *ledger.Stream, point uint64, err error, locked bool, seen map[*ledger.Stream]bool) {
	seen[q] = true
	k, sources := s.ledger.Suspects(q)
	if k != nil {
		s.noteFault(fmt.Errorf("compute: work queued on stream %d failed on the device (the last kernel launched there: %s): %w", id, *k, err))
	} else {
		s.noteFault(fmt.Errorf("compute: work queued on stream %d failed on the device: %w", id, err))
	}
	bs := s.ledger.Fail(q, point, nil)
	func() {
		if !locked {
			s.owner.Lock()
			defer s.owner.Unlock()
		}
		if len(bs) > 0 {
			s.streams.FailedWriting(id, bs, err)
		}
		// The streams ordered after q are failed now, not after the sources are asked
		// below: a stream can be both (each waited for the other's work), and the
		// failure is already acknowledged, so the cpu device no longer passes it on to
		// a cross-stream wait that runs only now. Its wait then succeeds although its
		// work computed from what q's faulted work left unwritten, and confirm erases
		// its ordering after q: failOrdered run last found nothing to fail, and that
		// work's output read as written.
		s.failOrdered(q, err, true)
		if st, serr := s.streams.Stream(id); serr == nil && !st.Capture.IsRecording() {
			_ = s.watch.syncQuiet(st.Sys) // its error is err, now carried
		}
	}()
	for _, src := range sources {
		if seen[src] {
			continue
		}
		seen[src] = true
		sid := src.ID()
		if st := s.streams.TryStream(sid); st == nil || st.Capture.IsRecording() {
			continue // a host wait would end its capture; its own next wait reports it
		}
		at := s.ledger.Mark()
		if serr := s.watch.syncQuiet(src.Sys()); serr != nil {
			s.failWaitFrom(sid, src, math.MaxUint64, fmt.Errorf("compute: a wait for stream %d failed: %w", sid, serr), locked, seen)
			continue
		}
		s.ledger.Confirm(src, at)
	}
}

// launched records that a launch just queued on stream q writes the buffers k's IO
// does not declare Read. The caller holds the owner's lock. In steady state it costs a
// lock and an append per output, and allocates nothing.
func (s *Server) launched(k *Kernel, buffers []Binding, q *ledger.Stream) {
	ledger.Launched(s.ledger, q, &k.Entry, buffers, k.IO, Read)
}

// failOrdered leaves the unconfirmed writes of every stream ordered after failed's work
// (directly or through others) since its last successful wait carrying err as well,
// those queued after the ordering (ledger.Ledger.FailOrdered).
func (s *Server) failOrdered(failed *ledger.Stream, err error, locked bool) {
	took, taken := s.ledger.FailOrdered(failed)
	if len(took) == 0 {
		return
	}
	if !locked {
		s.owner.Lock()
		defer s.owner.Unlock()
	}
	for i, q := range took {
		id := q.ID()
		s.streams.FailedWriting(id, taken[i], ledger.OrderedError(id, err))
	}
}
