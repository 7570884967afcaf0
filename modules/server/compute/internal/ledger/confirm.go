package ledger

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// Confirmations are where the server learns which work an asynchronous failure belongs
// to. A device reports a fault of work already queued (a kernel that traps or reads out
// of bounds on a GPU, a command that fails on the cpu device's worker) only at a later
// synchronization, and reports it at every synchronization that waits past it: the wait
// says that something before its point failed, not what. So the ledger numbers points
// in each stream's work (Mark) and remembers, per device stream, the buffers written
// since the last point a wait confirmed:
//
//   - a wait that succeeds confirms every write queued on its stream before its point
//     (Confirm): those buffers hold their bytes, and no later failure is theirs;
//   - a wait that fails leaves every write on its stream before its point that no wait
//     had confirmed carrying the failure (Fail), as the failure of the work that should
//     have written them. The faulted work is among them; the others are written by work
//     the device may not have run (a GPU stops a faulted context for good), so their
//     bytes are not known either. None of them returns bytes that nothing wrote.
//
// A write a successful wait confirmed stays clean whatever fails later, and the wait
// that fails still fails the call that waits.

// Late is a failed stream-wide wait's error and the writes it leaves unknown, on the
// device stream On: the caller marks them under On's id (Stream.ID).
type Late struct {
	On     *Stream
	Writes []Binding
	Err    error
}

// Mark is a new point, later than every point handed out before: work queued before
// the call is before it.
func (l *Ledger) Mark() uint64 { return l.next.Add(1) }

// unconfirmed is one stream's buffers written since its last confirmed point, each
// entry with the points of its first unconfirmed write and its latest. A write appends
// an entry, which is all the launch path pays; once the list has doubled since it was
// last merged, entries of one buffer are merged into one, so a loop of launches without
// a wait keeps it about as long as the buffers it writes. A write of several staging
// chunks is several writes. Guarded by Ledger.mu.
type unconfirmed struct {
	done   uint64 // the latest point a wait confirmed
	writes []pointedWrite
	merged int               // len(writes) after the last merge
	index  map[memory.ID]int // merge's scratch, kept so that a merge allocates nothing
}

// mergeSlack is how many entries the list may grow past twice its merged length before
// it is merged again: a short list is never worth the map's walk.
const mergeSlack = 64

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
	if len(u.writes) >= 2*u.merged+mergeSlack {
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

// Wrote records that work just queued on q writes bs. The caller holds the server's
// owner lock.
func (l *Ledger) Wrote(q *Stream, bs ...Binding) {
	if len(bs) == 0 {
		return
	}
	l.mu.Lock()
	at := l.Mark()
	for _, b := range bs {
		q.writes.record(b, at)
	}
	l.mu.Unlock()
}

// Launched records that a launch of the kernel named entry, just queued on q, writes
// the buffers whose access in io is not read (the launch checked that io covers every
// buffer). The caller holds the server's owner lock. In steady state it costs a lock
// and an append per output, and allocates nothing.
func Launched[A comparable](l *Ledger, q *Stream, entry *string, buffers []Binding, io []A, read A) {
	l.mu.Lock()
	at := l.Mark()
	u := &q.writes
	q.lastKernel = entry
	for i := range buffers {
		if i < len(io) && io[i] != read {
			u.record(buffers[i], at)
		}
	}
	l.mu.Unlock()
}

// Confirm records that a wait for point on q succeeded.
func (l *Ledger) Confirm(q *Stream, point uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
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

// Fail takes the buffers with a write on q before point that no wait confirmed, which
// a failed wait for point leaves carrying its failure, appended to into. A buffer
// written again after point goes too: part of its bytes is unknown. Every write on the
// device stream is q's, whichever logical id queued it.
func (l *Ledger) Fail(q *Stream, point uint64, into []Binding) []Binding {
	l.mu.Lock()
	defer l.mu.Unlock()
	q.writes.keep(func(w *pointedWrite) bool {
		if w.first <= point {
			into = append(into, w.b)
			return true
		}
		return false
	})
	return into
}

// Pending reports whether a write of allocation id waits for a confirmation on some
// stream, or was taken by a failed wait and not yet marked (late).
func (l *Ledger) Pending(id memory.ID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	l.each(func(q *Stream) bool {
		u := &q.writes
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
	for _, f := range l.late {
		for i := range f.Writes {
			if f.Writes[i].ID() == id {
				return true
			}
		}
	}
	return false
}

// OrderedAfter records that waiter was just ordered, on the device, after the work
// queued so far on src (a cross-stream wait).
func (l *Ledger) OrderedAfter(waiter, src *Stream) {
	l.mu.Lock()
	if waiter.waitedOn == nil {
		waiter.waitedOn = map[*Stream]ordering{}
	}
	at := l.Mark()
	o, ok := waiter.waitedOn[src]
	if !ok {
		o.first = at // the earliest unconfirmed ordering: writes after it may use src's work
	}
	o.last = at
	waiter.waitedOn[src] = o
	l.mu.Unlock()
}

// Suspects are what a failed wait of q asks further: the entry name of the kernel
// launched last on q (nil for none), and the streams q was ordered after since its last
// successful wait, where the failure may have come from.
func (l *Ledger) Suspects(q *Stream) (lastKernel *string, sources []*Stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for src := range q.waitedOn {
		sources = append(sources, src)
	}
	return q.lastKernel, sources
}

// FailLate takes, for a stream-wide wait of q made inside another call that failed,
// every unconfirmed write of q and of the streams ordered after it, as late failures
// for the next server call to mark (TakeLate). describe makes the wait's error from q's
// id and the kernel it launched last; FailLate returns it. The device reports an
// asynchronous failure at such a wait, and the cpu device forgets it once a
// stream-wide wait has reported it: unless the writes are taken now, the faulted
// work's output would read as written.
func (l *Ledger) FailLate(q *Stream, describe func(id stream.ID, lastKernel *string) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := &q.writes
	bs := make([]Binding, 0, len(u.writes))
	for _, w := range u.writes {
		bs = append(bs, w.b)
	}
	clear(u.writes)
	u.writes, u.merged = u.writes[:0], 0
	werr := describe(q.ID(), q.lastKernel)
	if len(bs) > 0 {
		l.late = append(l.late, Late{On: q, Writes: bs, Err: werr})
	}
	took, taken := l.takeOrderedLocked(q)
	for i, o := range took {
		l.late = append(l.late, Late{On: o, Writes: taken[i], Err: OrderedError(o.ID(), werr)})
	}
	l.hasLate.Store(len(l.late) > 0)
	return werr
}

// TakeLate gives the late failures and forgets them; nil, for one atomic load, when
// there are none.
func (l *Ledger) TakeLate() []Late {
	if !l.hasLate.Load() {
		return nil
	}
	l.mu.Lock()
	late := l.late
	l.late = nil
	l.hasLate.Store(false)
	l.mu.Unlock()
	return late
}

// OrderedError is the failure a stream ordered after failed work carries, reported
// under the ordered stream's id.
func OrderedError(id stream.ID, err error) error {
	return fmt.Errorf("compute: stream %d was ordered after work that failed: %w", id, err)
}

// FailOrdered takes the unconfirmed writes of every stream ordered after failed's work
// (directly or through others) since its last successful wait, those queued after the
// ordering, each stream's list with it; those with none are left out. Their work may
// have computed from bytes the failed work never wrote. A GPU stops every stream at a
// fault, and the cpu device passes a failure on through the waits; but a stream whose
// wait ran after the failure was acknowledged learns nothing of it, so the ledger does
// not count on either.
func (l *Ledger) FailOrdered(failed *Stream) (took []*Stream, taken [][]Binding) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takeOrderedLocked(failed)
}

// takeOrderedLocked is FailOrdered; the caller holds mu.
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
func (l *Ledger) takeOrderedLocked(failed *Stream) (took []*Stream, taken [][]Binding) {
	from := map[*Stream]uint64{failed: failed.writes.done}
	for grew := true; grew; {
		grew = false
		l.each(func(q *Stream) bool {
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
