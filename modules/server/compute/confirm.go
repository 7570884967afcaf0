package compute

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// confirmations is where the server learns which work an asynchronous failure belongs
// to. A device reports a fault of work already queued (a kernel that traps or reads
// out of bounds on a GPU, a command that fails on the cpu device's worker) only at a
// later synchronization, and reports it at every synchronization that waits past it:
// the wait says that something before its point failed, not what. So the server numbers
// points in each stream's work (mark) and remembers, per stream, the buffers written
// since the last point a wait confirmed:
//
//   - a wait that succeeds confirms every write queued on its stream before its point:
//     those buffers hold their bytes, and no later failure is theirs;
//   - a wait that fails leaves every write on its stream before its point that no wait
//     had confirmed carrying the failure (fail), as the failure of the work that should
//     have written them. The faulted work is among them; the others are written by work
//     the device may not have run (a GPU stops a faulted context for good), so their
//     bytes are not known either. None of them returns bytes that nothing wrote.
//
// A write a successful Sync confirmed stays clean whatever fails later, and the wait
// that fails still fails the call that waits.
type confirmations struct {
	next atomic.Uint64 // the last point handed out; points start at 1

	// Writes take the owner's lock; confirm and fail are called from futures outside
	// it. mu guards every stream's writes (streamState.writes) and late.
	mu sync.Mutex

	// Failures of stream-wide waits made inside another call (a fallback's wait, a
	// pinned allocation's, a drop queue's), whose buffers are taken but not yet marked:
	// the wait may run under the stream layer's own locks, which marking takes. The
	// next server call marks them before it looks at any failure (carryLateFailures).
	late    []lateFailure
	hasLate atomic.Bool
}

// lateFailure is a failed stream-wide wait's error and the writes it leaves unknown.
type lateFailure struct {
	id  StreamID
	bs  []Binding
	err error
}

// mark is a new point, later than every point handed out before: work queued before
// the call is before it.
func (c *confirmations) mark() uint64 { return c.next.Add(1) }

// unconfirmed is one stream's buffers written since its last confirmed point, each
// entry with the points of its first unconfirmed write and its latest. A write appends
// an entry, which is all the launch path pays; once the list has doubled since it was
// last merged, entries of one buffer are merged into one, so a loop of launches without
// a wait keeps it about as long as the buffers it writes. A write of several staging
// chunks is several writes.
type unconfirmed struct {
	done   uint64 // the latest point a wait confirmed
	writes []pointedWrite
	merged int               // len(writes) after the last merge
	index  map[memory.ID]int // merge's scratch, kept so that a merge allocates nothing
}

// pointedWrite is an uncounted view of a written buffer and the points of its first
// unconfirmed write and its latest. A view of a buffer released since names a dead
// allocation, which the failure store sheds.
type pointedWrite struct {
	b           Binding
	first, last uint64
}

// record adds a write of b at point at to u.
func (u *unconfirmed) record(b Binding, at uint64) {
	if n := len(u.writes); n > 0 && u.writes[n-1].b.ID() == b.ID() {
		u.writes[n-1].last = at // the same buffer again: a launch loop's common case
		return
	}
	u.writes = append(u.writes, pointedWrite{b: b, first: at, last: at})
	if len(u.writes) >= 2*u.merged+64 {
		u.merge()
	}
}

// merge makes each buffer one entry: its earliest first and its latest last.
func (u *unconfirmed) merge() {
	if u.index == nil {
		u.index = map[memory.ID]int{}
	}
	at := u.index
	defer clear(at)
	out := u.writes[:0]
	for _, w := range u.writes {
		if i, ok := at[w.b.ID()]; ok {
			out[i].first = min(out[i].first, w.first)
			out[i].last = max(out[i].last, w.last)
			continue
		}
		at[w.b.ID()] = len(out)
		out = append(out, w)
	}
	clear(u.writes[len(out):]) // the views pin nothing for the GC
	u.writes, u.merged = out, len(out)
}

// wrote records that work just queued on stream q writes bs. The caller holds the
// owner's lock.
func (c *confirmations) wrote(q *streamState, bs ...Binding) {
	if len(bs) == 0 {
		return
	}
	c.mu.Lock()
	at := c.mark()
	for _, b := range bs {
		q.writes.record(b, at)
	}
	c.mu.Unlock()
}

// keep drops the entries for which drop says so, keeping the order of the others.
func (u *unconfirmed) keep(drop func(w *pointedWrite) bool) {
	out := u.writes[:0]
	for i := range u.writes {
		if !drop(&u.writes[i]) {
			out = append(out, u.writes[i])
		}
	}
	clear(u.writes[len(out):])
	u.writes = out
	u.merged = min(u.merged, len(out))
}

// confirm records that a wait for point on stream q succeeded.
func (c *confirmations) confirm(q *streamState, point uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := &q.writes
	u.done = max(u.done, point)
	for src, o := range q.waitedOn {
		switch {
		case o.last <= point:
			// The wait succeeded after these orderings: what the stream ran after them
			// completed, and a later failure there is not this stream's.
			delete(q.waitedOn, src)
		case o.first <= point:
			// A later ordering is still unconfirmed; it came after point, which is as
			// early as it can be (the writes after it are the ones it may have fed).
			q.waitedOn[src] = ordering{first: point + 1, last: o.last}
		}
	}
	u.keep(func(w *pointedWrite) bool {
		if w.first <= point {
			// Its writes up to point are confirmed; the others come after it.
			w.first = point + 1
		}
		return w.last <= point
	})
}

// fail takes the buffers with a write on stream q before point that no wait
// confirmed, which a failed wait for point leaves carrying its failure, appended to
// into. A buffer written again after point goes too: part of its bytes is unknown.
// Every write on the device stream is q's, whichever logical id queued it.
func (c *confirmations) fail(q *streamState, point uint64, into []Binding) []Binding {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := &q.writes
	u.keep(func(w *pointedWrite) bool {
		if w.first <= point {
			into = append(into, w.b)
			return true
		}
		return false
	})
	return into
}

// writePending reports whether a write of allocation id waits for a confirmation on
// some stream, or was taken by a failed wait and not yet marked (late).
func (s *Server) writePending(id memory.ID) bool {
	c := &s.points
	c.mu.Lock()
	defer c.mu.Unlock()
	found := false
	s.watch.queues.Range(func(_, v any) bool {
		u := &v.(*streamState).writes
		for i := range u.writes {
			if u.writes[i].b.ID() == id {
				found = true
				return false
			}
		}
		return true
	})
	if found {
		return true
	}
	for _, l := range c.late {
		for i := range l.bs {
			if l.bs[i].ID() == id {
				return true
			}
		}
	}
	return false
}

// streamWaitFailed is the queue watch's report that a stream-wide wait on sys, made
// inside a server call, failed. The device reports an asynchronous failure at such a
// wait, and the cpu device forgets it once a stream-wide wait has reported it: unless
// the stream's unconfirmed writes are taken now, the faulted work's output would read
// as written. They are taken here and marked at the next call (see late).
func (s *Server) streamWaitFailed(sys hipsys.Stream, err error) {
	q := s.watch.state(sys)
	c := &s.points
	c.mu.Lock()
	defer c.mu.Unlock()
	u := &q.writes
	// The failure store's hook and capture state are keyed by logical id: any id of
	// the device stream reaches them.
	id := s.idOf(q)
	bs := make([]Binding, 0, len(u.writes))
	for _, w := range u.writes {
		bs = append(bs, w.b)
	}
	clear(u.writes)
	u.writes, u.merged = u.writes[:0], 0
	werr := fmt.Errorf("compute: a wait for stream %d failed: %w", id, err)
	if q.lastKernel != nil {
		werr = fmt.Errorf("compute: a wait for stream %d failed (the last kernel launched there: %s): %w", id, q.lastKernel.Entry, err)
	}
	s.noteFault(werr)
	if len(bs) > 0 {
		c.late = append(c.late, lateFailure{id: id, bs: bs, err: werr})
	}
	took, taken := s.takeOrderedLocked(q)
	for i, o := range took {
		oid := s.idOf(o)
		c.late = append(c.late, lateFailure{id: oid, bs: taken[i], err: orderedError(oid, werr)})
	}
	c.hasLate.Store(len(c.late) > 0)
}

// carryLateFailures marks the writes that failed stream-wide waits took (see
// streamWaitFailed) as carrying their failure. The caller holds the owner's lock; a
// call pays one atomic load when there are none.
func (s *Server) carryLateFailures() {
	c := &s.points
	if !c.hasLate.Load() {
		return
	}
	c.mu.Lock()
	late := c.late
	c.late = nil
	c.hasLate.Store(false)
	c.mu.Unlock()
	for _, f := range late {
		s.streams.FailedWriting(f.id, f.bs, f.err)
	}
}

// failWait leaves what fail takes carrying err (taking the owner's lock unless the
// caller holds it, locked), then acknowledges the failure with a synchronization of the
// stream, when it does not record a capture (a host wait would invalidate it). A
// device that is not damaged by a fault (the cpu device) reports it at every later wait
// until that acknowledgement, which would fail the stream's later, unrelated work; the
// failure is now carried by the buffers it belongs to. A GPU's fault is sticky: there
// every later call fails anyway, with an error, never with wrong bytes.
func (s *Server) failWait(id StreamID, q *streamState, point uint64, err error, locked bool) {
	s.failWaitFrom(id, q, point, err, locked, map[*streamState]bool{})
}

// failWaitFrom is failWait, and then the same for the streams q was ordered after since
// its last successful wait, where the failure may have come from (a GPU stops every
// stream at a fault, and the cpu device passes a failure on through a cross-stream
// wait, so a stream's wait may report another's fault): each is asked with the driver's
// own wait, and one that fails is failed in turn, the one that succeeds confirmed. seen
// keeps a stream from being asked twice. The streams ordered after q's work take the
// failure too (failOrdered), before any of those waits.
func (s *Server) failWaitFrom(id StreamID, q *streamState, point uint64, err error, locked bool, seen map[*streamState]bool) {
	seen[q] = true
	s.points.mu.Lock()
	k := q.lastKernel
	var sources []*streamState
	for src := range q.waitedOn {
		if !seen[src] {
			sources = append(sources, src)
		}
	}
	s.points.mu.Unlock()
	if k != nil {
		s.noteFault(fmt.Errorf("compute: work queued on stream %d failed on the device (the last kernel launched there: %s): %w", id, k.Entry, err))
	} else {
		s.noteFault(fmt.Errorf("compute: work queued on stream %d failed on the device: %w", id, err))
	}
	bs := s.points.fail(q, point, nil)
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
		sid := s.idOf(src)
		if st := s.streams.TryStream(sid); st == nil || st.Capture.IsRecording() {
			continue // a host wait would end its capture; its own next wait reports it
		}
		at := s.points.mark()
		if serr := s.watch.syncQuiet(src.stream()); serr != nil {
			s.failWaitFrom(sid, src, math.MaxUint64, fmt.Errorf("compute: a wait for stream %d failed: %w", sid, serr), locked, seen)
			continue
		}
		s.points.confirm(src, at)
	}
}

// launched records that a launch just queued on stream q writes the buffers k's IO
// does not declare Read. The caller holds the owner's lock. In steady state it costs a
// lock and an append per output, and allocates nothing.
func (s *Server) launched(k *Kernel, buffers []Binding, q *streamState) {
	c := &s.points
	c.mu.Lock()
	at := c.mark()
	u := &q.writes
	q.lastKernel = k
	for i := range buffers {
		if i < len(k.IO) && k.IO[i] != Read {
			u.record(buffers[i], at)
		}
	}
	c.mu.Unlock()
}

// orderedAfter records that stream waiter was just ordered, on the device, after the
// work queued so far on src (the queue watch's report of a cross-stream wait).
func (s *Server) orderedAfter(waiter, src *streamState) {
	c := &s.points
	c.mu.Lock()
	if waiter.waitedOn == nil {
		waiter.waitedOn = map[*streamState]ordering{}
	}
	at := c.mark()
	o, ok := waiter.waitedOn[src]
	if !ok {
		o.first = at // the earliest unconfirmed ordering: writes after it may use src's work
	}
	o.last = at
	waiter.waitedOn[src] = o
	c.mu.Unlock()
}

// failOrdered leaves the unconfirmed writes of every stream ordered after failed's work
// (directly or through others) since its last successful wait carrying err as well,
// those queued after the ordering: their work may have computed from bytes the failed
// work never wrote. A GPU stops every stream at a fault, and the cpu device passes a
// failure on through the waits; but a stream whose wait ran after the failure was
// acknowledged learns nothing of it, so the server does not count on either. What
// takeOrderedLocked leaves out could not have read anything the failed work wrote.
func (s *Server) failOrdered(failed *streamState, err error, locked bool) {
	c := &s.points
	c.mu.Lock()
	took, taken := s.takeOrderedLocked(failed)
	c.mu.Unlock()
	if len(took) == 0 {
		return
	}
	if !locked {
		s.owner.Lock()
		defer s.owner.Unlock()
	}
	for i, q := range took {
		id := s.idOf(q)
		s.streams.FailedWriting(id, taken[i], orderedError(id, err))
	}
}

func orderedError(id StreamID, err error) error {
	return fmt.Errorf("compute: stream %d was ordered after work that failed: %w", id, err)
}

// takeOrderedLocked takes the unconfirmed writes of every stream ordered after failed
// (see failOrdered), each stream's list with it; those with none are left out. The
// caller holds confirmations.mu.
//
// The blame follows the device's order, no further. Each stream in it is suspect from
// a point on: failed from its last confirmed point (the failed work is among what it
// queued after the last wait that succeeded), and a stream ordered after a suspect one
// from its first wait for that one's work queued past the suspect point. A stream whose
// every such wait came no later than the suspect point waited only for confirmed work,
// which did not fail; and of a suspect stream, the writes whose every part was queued
// before its first such wait ran ahead of it, on bytes the failed work never touched
// (a buffer the failed work wrote is taken and carried by it, and a later launch that
// reads it is refused). Both stay unconfirmed, left to their own stream's waits. Only
// writes queued after the suspect point are taken, and only the waits that made a
// stream suspect are forgotten: their blame is now carried.
func (s *Server) takeOrderedLocked(failed *streamState) (took []*streamState, taken [][]Binding) {
	from := map[*streamState]uint64{failed: failed.writes.done}
	for grew := true; grew; {
		grew = false
		s.watch.queues.Range(func(_, v any) bool {
			q := v.(*streamState)
			if q == failed {
				return true // its own writes are the failed wait's to take
			}
			for src, o := range q.waitedOn {
				at, suspect := from[src]
				if !suspect || o.last <= at {
					continue // every wait here was for work no later than at: confirmed
				}
				// The first of them that waited past at came no earlier than either.
				after := max(o.first, at)
				if cur, ok := from[q]; !ok || after < cur {
					from[q], grew = after, true
				}
			}
			return true
		})
	}
	for q, at := range from {
		if q == failed {
			continue
		}
		for src, o := range q.waitedOn {
			if sat, suspect := from[src]; suspect && o.last > sat {
				delete(q.waitedOn, src)
			}
		}
		var bs []Binding
		q.writes.keep(func(w *pointedWrite) bool {
			if w.last > at {
				bs = append(bs, w.b)
				return true
			}
			return false
		})
		if len(bs) > 0 {
			took, taken = append(took, q), append(taken, bs)
		}
	}
	return took, taken
}

// idOf is a logical id of q's device stream (0 if the server holds none).
func (s *Server) idOf(q *streamState) StreamID {
	for _, sid := range s.streams.StreamIDs() {
		if st := s.streams.TryStream(sid); st != nil && st.Sys == q.stream() {
			return sid
		}
	}
	return 0
}
