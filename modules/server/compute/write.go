package compute

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// forceFlushBytes is CubeCL's threshold above which an upload flushes the drop queue at
// once: a large staging buffer should not wait for the policy to be handed back.
const forceFlushBytes = 10 << 20

// WriteOp is one host-to-device copy: the bytes of a dense tensor and where they go.
type WriteOp struct {
	Desc CopyDescriptor
	Data []byte
}

// WriteFuture is an enqueued write. Its Wait must be called, once, from any goroutine:
// it queues the copies the staging ring had no room for at the call, lets go of the
// future's references to the destinations, and returns the first failure.
type WriteFuture struct {
	s   *Server
	id  StreamID
	ops []pendingWrite
	err error // the first failure of the ops, which its destination carries too
	at  pieceCursor
	// team copies the chunks' host side, from the call's first chunk to the end of Wait
	// (nil for a write too small for one: copyParallel then).
	team *copyTeam
}

// pendingWrite is one op's destination (with a reference of its own, kept until Wait),
// its layout and the caller's bytes.
type pendingWrite struct {
	b    Binding
	l    layout
	data []byte
	done bool // written, or failed and carrying the failure

	// kept is the failure the destination carried before a write that covers only part
	// of its allocation: the write's success must not release it (keepFailure).
	kept error
}

// Write is CubeCL's write: each copy runs in write scopes over its destination, in order,
// on stream id. A copy that succeeds and fills its destination's whole allocation
// releases an earlier failure's hold on it (a buffer a launch left stale is recovered by
// writing it from the host just as much as by a launch that writes it from clean
// inputs); one that fills only part of it leaves the failure in place, since the rest
// still holds bytes the failed work left unwritten (a failure is carried per
// allocation). One that fails at any point leaves the destination carrying the
// failure, which a later read of it returns.
//
// Every copy is attempted, however the one before it went: a loop that stopped early
// would leave the destinations it never reached holding stale bytes and carrying no
// failure to say so, the one outcome this design exists to prevent.
//
// Data is Go memory. Inside a capture window each copy is staged into a pinned pool
// slice at the call (the graph replays the copy from it); otherwise the bytes go through
// the staging ring, chunk by chunk, each host copy overlapping the device's copy of the
// chunk before: the chunks free at the call are filled and queued now, and the future's
// Wait queues the rest as chunks come free. The caller may reuse Data once Wait returns.
//
// Differs from CubeCL: CubeCL stages a whole upload into one pinned buffer, then copies
// it; the ring keeps pinned memory bounded whatever the size, and doubles the rate of a
// copy from pageable memory. The failures are returned by Wait as well as carried.
func (s *Server) Write(ops []WriteOp, id StreamID) *WriteFuture {
	s.settleQueue()
	f := &WriteFuture{s: s, id: id, ops: make([]pendingWrite, len(ops))}
	st, serr := s.streams.Stream(id)
	// Inside a capture window, or when the ring cannot be had, every copy is staged at
	// once into a pinned pool slice (or, out of pinned memory, copied with a blocking
	// copy: see writeToGPU).
	atOnce := serr != nil || st.Capture.State() != stream.CaptureNone || s.staging.open(s.p) != nil
	ls := make([]layout, len(ops))
	for i := range ops {
		op := &ops[i]
		w := &f.ops[i]
		w.data = op.Data
		l, err := layoutOf(op.Desc)
		if err == nil {
			err = s.checkWrite(op.Desc, l, len(op.Data))
		}
		if err == nil && !coversAllocation(op.Desc.Binding, l) {
			w.kept = s.streams.EnsureWritten(op.Desc.Binding)
		}
		if err == nil && !atOnce && len(op.Data) > 0 {
			if w.b, err = op.Desc.Binding.Clone(); err == nil {
				if !l.pitched {
					n := uint64(len(op.Data))
					l = layout{bytes: n, width: n, height: 1, pitch: n, span: n}
				}
				w.l, ls[i] = l, l
				continue
			}
		}
		// Staged at once, in a scope: a failure above leaves the destination carrying
		// it, as the copy's own would.
		s.one[0] = op.Desc.Binding
		err = s.streams.Over(id, s.one[:]).Execute(func() error {
			if err != nil {
				return err
			}
			r, err := s.streams.Resolve(id, s.one[:])
			if err != nil {
				return err
			}
			defer r.Close()
			if err := s.writeToGPU(r.Stream(), op.Desc, l, op.Data); err != nil {
				return err
			}
			s.ledger.Wrote(s.ledger.Of(r.Stream().Sys), op.Desc.Binding)
			return nil
		})
		if err == nil {
			s.keepFailure(w.kept, op.Desc.Binding)
		}
		s.one[0] = Binding{}
		w.done = true
		if f.err == nil {
			f.err = err
		}
	}
	f.at = newPieceCursor(ls, s.staging.chunk)
	// Only chunks the device is done with, and their host copies on a copyTeam from the
	// first: a write gives each chunk back to the ring as soon as its copy is queued, so
	// taking whatever the ring held kept the call filling every chunk of the write, each
	// after a wait for its last copy under the owner's lock and with a goroutine per part
	// started afresh, so the host copies fell behind the device's copies of the chunks
	// (docs/benchmarks.md, "Staged writes: chunks the device is done with").
	if f.at.more() {
		f.team = newCopyTeam(f.left(), s.staging.chunk)
	}
	for f.at.more() {
		c := s.staging.takeIdle(s.p)
		if c == nil {
			break
		}
		f.queueNext(c)
	}
	return f
}

// checkWrite checks a copy of n bytes into d laid out as l: a pitched copy takes
// exactly its dense size, and nothing may reach past the buffer.
func (s *Server) checkWrite(d CopyDescriptor, l layout, n int) error {
	_, size, err := s.streams.Resource(d.Binding)
	if err != nil {
		return err
	}
	if l.pitched && uint64(n) != l.bytes && n != 0 {
		return fmt.Errorf("%w: %d bytes given for a pitched copy of %d", ErrInvalidArgument, n, l.bytes)
	}
	if span := max(uint64(n), l.deviceSpan()); n != 0 && span > size {
		return fmt.Errorf("%w: write of %d bytes exceeds the target buffer of %d bytes", ErrOutOfBounds, span, size)
	}
	return nil
}

// Wait queues the copies the call left, each as soon as a staging chunk is free, and
// returns the first op's failure. It takes the owner's lock to queue each chunk.
//
// A large write's host copies go through the copyTeam its call started.
func (f *WriteFuture) Wait() error {
	s := f.s
	team := f.team
	defer team.close()
	for f.at.more() {
		c := s.staging.take(true)
		if err := s.ready(c, false); err != nil {
			s.staging.put(c)
			s.owner.Lock()
			f.failRest(err)
			s.owner.Unlock()
			break
		}
		part, p := f.at.peek()
		w := &f.ops[part]
		team.copy(c.buf[:p.bytes()], w.data[p.host:p.host+p.bytes()])
		s.owner.Lock()
		f.queueFilled(c)
		s.owner.Unlock()
	}
	for i := range f.ops {
		_ = f.ops[i].b.Release()
	}
	return f.err
}

// left is how many bytes the copies not yet queued hold, at most: the ops from the
// next piece's on, whole.
func (f *WriteFuture) left() uint64 {
	part, _ := f.at.peek()
	var n uint64
	for _, w := range f.ops[part:] {
		n += uint64(len(w.data))
	}
	return n
}

// queueNext fills c with the next piece and queues it (the owner's lock held).
func (f *WriteFuture) queueNext(c *chunk) {
	if err := f.s.ready(c, true); err != nil {
		f.s.staging.put(c)
		f.failRest(err)
		return
	}
	part, p := f.at.peek()
	w := &f.ops[part]
	f.team.copy(c.buf[:p.bytes()], w.data[p.host:p.host+p.bytes()])
	f.queueFilled(c)
}

// queueFilled queues the copy of the next piece, whose bytes c holds, in a write scope
// over its destination (the owner's lock held), and gives c back to the ring. A failure
// leaves the destination carrying it and skips the op's remaining pieces: their success
// would release it, and the buffer would read back half written.
func (f *WriteFuture) queueFilled(c *chunk) {
	s := f.s
	part, p := f.at.next()
	w := &f.ops[part]
	s.one[0] = w.b
	err := s.streams.Over(f.id, s.one[:]).Execute(func() error {
		r, err := s.streams.Resolve(f.id, s.one[:])
		if err != nil {
			return err
		}
		defer r.Close()
		st := r.Stream()
		if st.Capture.State() != stream.CaptureNone {
			return fmt.Errorf("%w: the stream opened a capture window while a write to it was in flight", stream.ErrGraphState)
		}
		ptr, _, err := s.streams.Resource(w.b)
		if err != nil {
			return err
		}
		// SAFETY: c is pinned memory the ring owns; it is refilled only after its event,
		// recorded right after this copy, has completed.
		if err := s.copyPiece(st.Sys, c.host, ptr, w.l, p, hipsys.MemcpyHostToDevice); err != nil {
			return err
		}
		s.ledger.Wrote(s.ledger.Of(st.Sys), w.b)
		return c.arm(s, f.id, st.Sys)
	})
	s.one[0] = Binding{}
	s.staging.put(c)
	if err != nil {
		if f.err == nil {
			f.err = err
		}
		f.at.skipPart(part)
		return
	}
	s.keepFailure(w.kept, w.b)
}

// failRest leaves every op not yet fully queued carrying err (the owner's lock held):
// part of its bytes may be written, part not.
func (f *WriteFuture) failRest(err error) {
	if f.err == nil {
		f.err = err
	}
	for f.at.more() {
		part, _ := f.at.peek()
		f.ops[part].done = true
		f.s.one[0] = f.ops[part].b
		f.s.streams.FailedWriting(f.id, f.s.one[:], err)
		f.s.one[0] = Binding{}
		f.at.skipPart(part)
	}
}

// coversAllocation reports whether a copy laid out as l into b fills every byte of b's
// allocation: a whole view (no offsets), dense, as long as the allocation.
func coversAllocation(b Binding, l layout) bool {
	start, end := b.Offsets()
	return start == 0 && end == 0 && !l.pitched && l.bytes == b.Size()
}

// keepFailure puts back the failure a partial write's destination carried (kept), which
// the write's successful scope released: the bytes the write did not cover are still
// the failed work's. A claim (the destination was being written by work not yet
// settled) is no failure to keep.
func (s *Server) keepFailure(kept error, b Binding) {
	if kept == nil || errors.Is(kept, stream.ErrUnsettled) {
		return
	}
	s.streams.Taint(kept, b)
}

// writeToGPU is CubeCL's write_to_gpu on the command's stream st, for a copy that does
// not take the ring (inside a capture window, and Create's): stage the bytes into a pinned pool slice and enqueue the copy; the
// slice goes to the drop queue, which releases it once the copy is done (a recording
// capture retains it for as long as the graph lives). The caller checked d.
//
// Differs from CubeCL: CubeCL panics when the pinned reservation or the driver copy
// fails; both are returned here, so the scope leaves the destination carrying them.
// When pinned memory runs out, a linear copy in the warm-up run falls back to a blocking
// copy from Go memory after the stream's earlier work (never while recording: that would
// invalidate the capture); a pitched one cannot (2D copies take platform memory only).
func (s *Server) writeToGPU(st *stream.Stream, d CopyDescriptor, l layout, data []byte) error {
	ptr, _, err := s.streams.Resource(d.Binding)
	if err != nil {
		return err
	}
	// Before any staging: an empty [0, 1] tensor must not reach a 2D copy.
	if len(data) == 0 {
		return nil
	}
	n := uint64(len(data))
	staged, err := st.ReservePinned(n)
	if err != nil {
		return s.writeUnstaged(st, l, ptr, data, err)
	}
	copy(staged.Bytes(), data)
	p := piece{width: n, height: 1}
	if l.pitched {
		p = whole(l)
	}
	// SAFETY: staged is pinned memory owned by this command; the drop queue releases it
	// only after a fence recorded after the copy has completed.
	if err := s.copyPiece(st.Sys, staged.Ptr(), ptr, l, p, hipsys.MemcpyHostToDevice); err != nil {
		// Nothing was queued that reads the staging buffer.
		_ = staged.Release()
		return err
	}
	if ferr := st.Drop(staged, n, n > forceFlushBytes); ferr != nil {
		// The queue's own trouble says nothing about the copy just enqueued.
		s.log.Warn("compute: drop-queue flush failed", "err", ferr)
	}
	return nil
}

// writeUnstaged is the write's fallback when pinned staging ran out (why).
func (s *Server) writeUnstaged(st *stream.Stream, l layout, ptr hipsys.DevicePtr, data []byte, why error) error {
	if st.Capture.IsRecording() {
		return fmt.Errorf("%w for a %d-byte write: %w: inside a capture only the pinned memory its warm-up reserved can be used (%w)", ErrNoPinnedMemory, len(data), stream.ErrGraphState, why)
	}
	if l.pitched {
		return s.explain(fmt.Errorf("%w for a %d-byte write: %w", ErrNoPinnedMemory, len(data), why))
	}
	// The blocking copy is not ordered with the stream's queued work: wait for it.
	if err := s.p.StreamSynchronize(st.Sys); err != nil {
		return s.explain(fmt.Errorf("compute: write without staging: %w", err))
	}
	if err := s.p.MemcpyHtoD(ptr, data); err != nil {
		return fmt.Errorf("compute: write of %d bytes: %w", len(data), err)
	}
	return nil
}

// Create is a new allocation on stream id holding a copy of data (a 1-D byte tensor).
// On failure nothing is left allocated and the error is returned: no one else holds the
// buffer, so there is nothing to carry the failure. The bytes go through a pinned pool
// slice, as CubeCL's create_with_data does, so Create never waits for the ring.
func (s *Server) Create(data []byte, id StreamID) (Handle, error) {
	h, err := s.Empty(uint64(len(data)), id)
	if err != nil {
		return Handle{}, err
	}
	b, err := h.Binding()
	if err == nil {
		d := Linear(b, len(data))
		s.one[0] = b
		err = s.streams.Over(id, s.one[:]).Execute(func() error {
			r, err := s.streams.Resolve(id, s.one[:])
			if err != nil {
				return err
			}
			defer r.Close()
			return s.writeToGPU(r.Stream(), d, layout{bytes: uint64(len(data)), width: uint64(len(data)), height: 1, pitch: uint64(len(data)), span: uint64(len(data))}, data)
		})
		s.one[0] = Binding{}
		_ = b.Release()
	}
	if err != nil {
		_ = h.Release()
		return Handle{}, err
	}
	return h, nil
}

// createWithData is CubeCL's create_with_data inside a command on st: a device buffer
// holding data, uploaded through pinned staging. The caller owns the handle.
func (s *Server) createWithData(st *stream.Stream, data []byte) (memory.Handle, error) {
	n := uint64(len(data))
	h, err := st.Reserve(n)
	if err != nil {
		return memory.Handle{}, err
	}
	if n == 0 {
		return h, nil
	}
	res, err := st.GPU.HandleResource(h)
	if err == nil {
		var staged *stream.Staging
		staged, err = st.ReservePinned(n)
		if err != nil {
			err = s.explain(fmt.Errorf("%w: %w", ErrNoPinnedMemory, err))
		} else {
			copy(staged.Bytes(), data)
			// SAFETY: staged is pinned C memory, released by the drop queue after a
			// fence that follows the copy.
			err = s.p.MemcpyHtoDAsync(hipsys.DevicePtr(res.Addr()), staged.Ptr(), n, st.Sys)
			if err != nil {
				_ = staged.Release()
			} else if ferr := st.Drop(staged, n, false); ferr != nil {
				s.log.Warn("compute: drop-queue flush failed", "err", ferr)
			}
		}
	}
	if err != nil {
		_ = h.Release()
		return memory.Handle{}, err
	}
	return h, nil
}
