package stream

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/memory"
)

// Differs from CubeCL: cross-stream order follows a buffer's last
// write, not the cursor at which it was allocated. CubeCL compares the slice's bind
// cursor on its creation stream, so once stream B has waited for A past that point, a
// later write of the same buffer on A is not waited for, and B reads it half written.
// Here every write scope marks its outputs with the stream and cursor that wrote them,
// and a command waits for the writer of each buffer it is given.
//
// A buffer never written through a scope (only allocated) is ordered after the work its
// home stream had finished enqueuing, which covers any earlier use of the recycled
// slice. Reads are not tracked: a write on A of a buffer B is still reading is the
// client's to order, as in CubeCL.

// mark is the last write of one allocation, made away from its home stream.
type mark struct {
	slot   int32  // the stream that wrote it
	cursor uint64 // the writer's cursor during the write
	b      memory.Binding
}

// marks is the server-wide table of last writes away from home, safe for concurrent use.
// foreign is its size, read without the lock: while it is zero, a command whose buffers
// all live on its own stream needs no lookup at all.
type marks struct {
	foreign atomic.Int64
	mu      sync.Mutex
	m       map[memory.ID]mark
	sweepAt int
}

// wrote marks written as last written by s at cursor.
//
// Only a write away from the allocation's home stream is kept. A home write is ordered
// by the fallback every reader already takes for a buffer with no mark, its home
// stream's done cursor, which Execute advances past the write; so it only needs to drop
// an older mark, which would name an earlier write. While no foreign mark exists there
// is no older mark to drop, and a command on the buffers' own stream (nearly every
// launch) writes nothing here and takes no lock.
func (k *marks) wrote(s *Stream, written []Binding, cursor uint64) {
	if k.foreign.Load() == 0 && allHome(s, written) {
		return
	}
	k.mu.Lock()
	if k.m == nil {
		k.m = make(map[memory.ID]mark)
	}
	for i := range written {
		b := &written[i]
		id := b.ID()
		if id == 0 {
			continue
		}
		if s.m.slotOf(b.Stream) == s.slot {
			if _, ok := k.m[id]; ok {
				delete(k.m, id)
				k.foreign.Add(-1)
			}
			continue
		}
		if _, ok := k.m[id]; !ok {
			k.foreign.Add(1)
		}
		k.m[id] = mark{slot: int32(s.slot), cursor: cursor, b: b.Binding}
	}
	if len(k.m) >= max(k.sweepAt, minSweep) {
		k.sweepLocked()
	}
	k.mu.Unlock()
}

// allHome reports whether every buffer of written lives on s's own pools.
func allHome(s *Stream, written []Binding) bool {
	for i := range written {
		if s.m.slotOf(written[i].Stream) != s.slot {
			return false
		}
	}
	return true
}

func (k *marks) get(id memory.ID) (mark, bool) {
	k.mu.Lock()
	w, ok := k.m[id]
	k.mu.Unlock()
	return w, ok
}

func (k *marks) shedDead() {
	k.mu.Lock()
	k.sweepLocked()
	k.mu.Unlock()
}

func (k *marks) sweepLocked() {
	for id, w := range k.m {
		if !w.b.Valid() {
			k.foreign.Add(-1)
			delete(k.m, id)
		}
	}
	k.sweepAt = 2 * len(k.m)
}

// Resolved is one command's view of its stream, returned by Resolve. Close it when the
// command's work is enqueued.
type Resolved struct {
	s *Stream
}

// Stream is the command's stream.
func (r Resolved) Stream() *Stream { return r.s }

// Cursor is the command's cursor: what Bind stamps on allocations made by it.
func (r Resolved) Cursor() uint64 { return r.s.cursor.Load() }

// Resolve prepares a command on stream id that uses bs: it creates the stream if needed,
// makes it wait (on the device, never the host) for the last writer of every buffer
// written on another stream since it last waited there, pins every buffer from another
// stream's pools until the command's work is done, and advances the stream's cursor.
// While the stream records a capture, the capture also holds every buffer in bs until
// its graph is destroyed: the recorded work uses them at every replay.
//
// It fails only if the stream cannot be created or a wait cannot be enqueued; on
// failure nothing is pinned. When every buffer lives on id's own stream and none was
// last written elsewhere, it allocates nothing and takes no lock.
func (m *MultiStream) Resolve(id ID, bs []Binding) (Resolved, error) {
	s, err := m.Stream(id)
	if err != nil {
		return Resolved{}, err
	}
	if len(bs) > 0 {
		if err := m.order(s, bs); err != nil {
			return Resolved{}, err
		}
		if s.Capture.IsRecording() {
			for i := range bs {
				// A buffer of another stream's pools is pinned by order already.
				if m.slotOf(bs[i].Stream) == s.slot {
					s.Capture.hold(bs[i])
				}
			}
		}
	}
	s.cursor.Add(1)
	return Resolved{s: s}, nil
}

func (m *MultiStream) order(s *Stream, bs []Binding) error {
	s.waits = s.waits[:0]
	foreign := m.marks.foreign.Load() != 0
	npins := len(s.pins)
	for i := range bs {
		b := &bs[i]
		home := m.slotOf(b.Stream)
		if home == s.slot {
			if !foreign {
				continue
			}
			if w, ok := m.marks.get(b.ID()); ok && int(w.slot) != s.slot {
				s.need(int(w.slot), w.cursor)
			}
			continue
		}
		// Borrowed from another stream's pools: keep it until this command is done. An
		// invalid binding pins nothing; the command's resource lookup reports it.
		if pin, err := b.Clone(); err == nil {
			s.pins = append(s.pins, pin)
		}
		if w, ok := m.marks.get(b.ID()); ok {
			if int(w.slot) != s.slot {
				s.need(int(w.slot), w.cursor)
			}
		} else if origin := m.slots[home].Load(); origin != nil {
			s.need(home, origin.done.Load())
		}
	}
	for _, slot := range s.waits {
		origin := m.slots[slot].Load()
		// done is read before the event is recorded, so the event covers every
		// command up to it.
		done := origin.done.Load()
		var f Fence
		var err error
		if origin.Capture.IsRecording() {
			// A fence recorded on a stream that records a capture is a node of the graph,
			// not a moment that comes: the wait would order nothing (or pull s into the
			// capture), so the command that needs it is refused until the capture ends.
			err = fmt.Errorf("%w: a buffer's last write is on a stream that records a capture: use it there, or after the capture ends", ErrGraphState)
		} else {
			f, err = NewFence(m.p, origin.Sys)
		}
		if err == nil {
			err = f.WaitOn(s.Sys)
		}
		if err != nil {
			for i := npins; i < len(s.pins); i++ {
				_ = s.pins[i].Release()
			}
			s.pins = s.pins[:npins]
			return err
		}
		s.lastSynced[slot] = done
	}
	return nil
}

// orderedOutputs is written less the buffers whose last write s is not ordered after
// (those order would still wait for): the outputs a failed scope may mark as written
// by s. When order could not enqueue a wait, nothing of the command ran and s never
// waited for the buffers' last writer; marking them as s's would make the next command
// on s skip that wait, and on a retry that succeeds (a launch whose whole output
// releases the failure) read or write them while the earlier write is still in
// flight: a read returns the bytes from before it, which nothing wrote to the buffer
// as far as its program is concerned. Their last write stays where it was, so every
// later command waits for it. Failure path only; it allocates when it drops one.
func (m *MultiStream) orderedOutputs(s *Stream, written []Binding) []Binding {
	for i := range written {
		if !m.orderedAfterWrite(s, &written[i]) {
			out := append([]Binding(nil), written[:i]...)
			for j := i + 1; j < len(written); j++ {
				if m.orderedAfterWrite(s, &written[j]) {
					out = append(out, written[j])
				}
			}
			return out
		}
	}
	return written
}

// orderedAfterWrite reports whether s is ordered after b's last write: whether order
// would schedule no wait for it now (the same writer lookup: its mark, else, for a
// buffer of another stream's pools, that stream's done cursor).
func (m *MultiStream) orderedAfterWrite(s *Stream, b *Binding) bool {
	slot, cursor := s.slot, uint64(0)
	if w, ok := m.marks.get(b.ID()); ok {
		slot, cursor = int(w.slot), w.cursor
	} else if home := m.slotOf(b.Stream); home != s.slot {
		if origin := m.slots[home].Load(); origin != nil {
			slot, cursor = home, origin.done.Load()
		}
	}
	return slot == s.slot || cursor == 0 || s.lastSynced[slot] >= cursor
}

// need schedules a wait on slot unless the stream already waited for it past cursor.
func (s *Stream) need(slot int, cursor uint64) {
	if cursor == 0 || s.lastSynced[slot] >= cursor {
		return
	}
	for _, w := range s.waits {
		if w == slot {
			return
		}
	}
	s.waits = append(s.waits, slot)
}

// Close ends the command: its work is enqueued, so other streams may now order after
// it, and the buffers it borrowed from other streams wait for a fence after the work
// (or, while recording, go to the capture, since the recorded work runs only at
// replay). The fence is recorded once for the borrowings of pinBatch commands
// (FencePins), or at once when one of them is another library's memory, whose owner
// waits for it. Closing twice is harmless. It never waits on the host, except when no
// fence can be recorded: then it synchronizes the stream before releasing.
func (r Resolved) Close() error {
	s := r.s
	if s == nil {
		return nil
	}
	s.done.Store(s.cursor.Load())
	if len(s.pins) == 0 {
		return nil
	}
	if s.Capture.IsRecording() {
		pins := append([]Binding(nil), s.pins...)
		clear(s.pins)
		s.pins = s.pins[:0]
		s.Capture.pin(pins)
		return nil
	}
	now := false
	for i := range s.pins {
		now = now || s.pins[i].Imported()
	}
	if s.deferred == nil {
		s.deferred = new(deferredPins)
	}
	d := s.deferred
	if len(d.pins) == 0 {
		s.m.lending.Add(1)
	}
	d.pins = append(d.pins, s.pins...)
	clear(s.pins)
	s.pins = s.pins[:0]
	if d.cmds++; d.cmds < pinBatch && !now {
		return nil
	}
	return s.FencePins()
}

// pinBatch is how many commands' borrowings share one fence. Differs from CubeCL, whose
// every command that borrows records its own event and sends it to the GC thread. A
// fence per command was an event created, recorded and host-waited per launch of a
// buffer of another stream, which slowed both the caller and the device (the events
// between kernels, the release worker's queue filling; docs/benchmarks.md, "Borrowings
// fenced in batches"). Holding a borrowing longer is always safe: the owning pool reuses the
// memory later, never sooner.
const pinBatch = 32

// FencePins records one fence on the stream, after the work of every closed command
// whose borrowed bindings wait for one, and hands those bindings to the release worker,
// which releases them once the fence completes. Nothing to do with none waiting or while
// the stream records a capture (a fence there would be a node of the graph: they wait
// for the next FencePins after it). The server calls it where its caller waits for the
// stream or flushes it, so that a program's borrowings end with its work. It never waits
// on the host, except when no fence can be recorded: then it synchronizes the stream
// before releasing.
func (s *Stream) FencePins() error {
	d := s.deferred
	if d == nil || len(d.pins) == 0 || s.Capture.IsRecording() {
		return nil
	}
	pins := append([]Binding(nil), d.pins...)
	clear(d.pins)
	d.pins, d.cmds = d.pins[:0], 0
	s.m.lending.Add(-1)
	f, err := NewFence(s.m.p, s.Sys)
	if err != nil {
		if serr := s.m.p.StreamSynchronize(s.Sys); serr != nil {
			s.m.cfg.log.Warn("stream: cross-stream bindings leaked: no fence and no sync", "err", serr)
			return err
		}
		for i := range pins {
			_ = pins[i].Release()
		}
		return err
	}
	s.m.rel.send(&releaseBatch{pins: pins, fence: f})
	return nil
}
