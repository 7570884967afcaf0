package compute

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// directRead is the largest read that may skip staging when its stream is idle: a
// blocking copy of a few bytes costs one driver call, where staging costs an async copy,
// an event record and an event wait (on the cpu platform, a wake-up of the stream's
// worker as well). Differs from CubeCL, whose reads always go through pinned staging and
// a fence: this is what holds the 4-byte round trip to 15% over the driver's own
// blocking copy.
const directRead = 64 << 10

// ReadFuture is an enqueued read. Wait or WaitInto, called once from any goroutine,
// finishes it: it waits for the copies, queues those the staging ring had no room for
// at the call, and releases the staging and the future's hold on the buffers. The
// future must not be used after its Wait: it is recycled for a later read, so that a
// small read allocates nothing.
type ReadFuture struct {
	s     *Server
	err   error // the claim check's, or the enqueue's: reported once the queued copies are done
	parts []readPart
	one   [1]readPart // parts' storage for a read of one buffer
	id    StreamID
	sys   hipsys.Stream

	direct bool // one small read of an idle stream: a blocking copy in Wait
	slot   int  // 1 + the read slot a small read's copy was queued into (smallread.go)

	// Inside a capture window: pinned pool slices, one per part, and a fence after them.
	staged []*HostBuffer
	fence  stream.Fence

	// Through the ring: the copies queued, oldest first, and the next piece to queue.
	queued []queuedPiece
	cursor pieceCursor
}

// readPart is one checked descriptor: a counted reference that keeps the allocation
// alive until Wait, its device address and its layout.
type readPart struct {
	b   Binding
	ptr hipsys.DevicePtr
	l   layout
}

// queuedPiece is one chunk's copy in flight: into c, bound for part's bytes at host.
type queuedPiece struct {
	c    *chunk
	part int
	p    piece
}

// Wait waits for the copies and returns one dense byte slice per descriptor: a failure
// the copies ran into first, else the claim check's or the enqueue's, else the bytes.
func (f *ReadFuture) Wait() ([][]byte, error) {
	out := make([][]byte, len(f.parts))
	for i, p := range f.parts {
		out[i] = make([]byte, p.l.bytes)
	}
	if err := f.WaitInto(out...); err != nil {
		return nil, err
	}
	return out, nil
}

// WaitInto is Wait into the caller's memory: dst[i] receives descriptor i's dense bytes
// and must be exactly that long.
func (f *ReadFuture) WaitInto(dst ...[]byte) error {
	defer f.recycle()
	if f.err == nil && len(dst) != len(f.parts) {
		f.err = fmt.Errorf("%w: %d destinations for %d descriptors", ErrInvalidArgument, len(dst), len(f.parts))
	}
	for i := range dst {
		if f.err == nil && uint64(len(dst[i])) != f.parts[i].l.bytes {
			f.err = fmt.Errorf("%w: destination %d holds %d bytes for a read of %d", ErrInvalidArgument, i, len(dst[i]), f.parts[i].l.bytes)
		}
	}
	switch {
	case f.slot != 0:
		if f.err != nil {
			// The copy is queued: the slot waits for it all the same.
			_ = f.waitSmall(nil)
			return f.err
		}
		return f.waitSmall(dst[0])
	case f.direct:
		if f.err != nil {
			return f.err
		}
		// SAFETY: dst is Go memory, which a blocking copy may use: the platform is done
		// with it when MemcpyDtoH returns.
		if err := f.s.p.MemcpyDtoH(dst[0], f.parts[0].ptr); err != nil {
			return fmt.Errorf("compute: read of %d bytes: %w", len(dst[0]), err)
		}
		return nil
	case f.fence.Valid() || f.staged != nil:
		if err := f.fence.Wait(); err != nil {
			return err
		}
		if f.err != nil {
			return f.err
		}
		for i, b := range f.staged {
			copy(dst[i], b.Bytes())
		}
		return nil
	}
	return f.drain(dst)
}

// drain keeps up to the ring's depth of chunks queued, draining the oldest into dst
// while the device fills the others. Only a call with nothing in flight waits for a
// free chunk: the others take what is free, so two reads never hold part of the ring
// each while waiting for the rest.
//
// A large read's host copies go through a copyTeam, and its fresh destination pages are
// advised huge first (adviseFresh): neither changes which bytes or failure it returns.
func (f *ReadFuture) drain(dst [][]byte) error {
	s := f.s
	var failed error // a copy's failure: it stops the queueing and wins over f.err
	var total uint64
	for i := range dst {
		if f.err == nil {
			adviseFresh(dst[i])
		}
		total += uint64(len(dst[i]))
	}
	team := newCopyTeam(total, s.staging.chunk)
	defer team.close()
	for len(f.queued) > 0 || (f.err == nil && failed == nil && f.cursor.more()) {
		for f.err == nil && failed == nil && f.cursor.more() && len(f.queued) < s.staging.depth {
			c := s.staging.take(len(f.queued) == 0)
			if c == nil {
				break
			}
			s.owner.Lock()
			err := f.queueNext(c)
			s.owner.Unlock()
			if err != nil {
				f.err = err
			}
		}
		if len(f.queued) == 0 {
			break
		}
		q := f.queued[0]
		f.queued = f.queued[1:]
		err := s.ready(q.c, false)
		if err == nil && failed == nil {
			p := q.p
			team.copy(dst[q.part][p.host:p.host+p.bytes()], q.c.buf[:p.bytes()])
		}
		s.staging.put(q.c)
		if err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		return failed
	}
	return f.err
}

// queueNext queues the next piece into c, under the owner's lock; on failure c goes back
// to the ring.
func (f *ReadFuture) queueNext(c *chunk) error {
	s := f.s
	part, p := f.cursor.next()
	err := s.ready(c, true)
	if err == nil {
		// SAFETY: c is pinned memory the ring owns; it is drained and reused only after
		// its event, recorded right after this copy, has completed.
		err = s.copyPiece(f.sys, c.host, f.parts[part].ptr, f.parts[part].l, p, hipsys.MemcpyDeviceToHost)
	}
	if err == nil {
		err = c.arm(s, f.id, f.sys)
	}
	if err != nil {
		s.staging.put(c)
		return err
	}
	f.queued = append(f.queued, queuedPiece{c: c, part: part, p: p})
	return nil
}

// futures recycles ReadFutures: a small read's future would otherwise be its one
// allocation, and the garbage it makes at a read's rate costs more than the read.
var futures = sync.Pool{New: func() any { return new(ReadFuture) }}

// recycle gives back the future's references, which Wait is done with, and the future.
func (f *ReadFuture) recycle() {
	for i := range f.parts {
		_ = f.parts[i].b.Release()
	}
	for _, b := range f.staged {
		_ = b.Release()
	}
	*f = ReadFuture{}
	futures.Put(f)
}

// Read is CubeCL's read on stream id: the claim check (bytes are only as good as the
// work that wrote them: a buffer carrying a failure returns it and nothing is enqueued),
// then for each descriptor in order, its checks and its copies (pitched when the strides
// say so; zero bytes copy nothing). The first descriptor that fails stops the loop; the
// future reports it once the copies already queued are done.
//
// How the bytes travel (see Staging): on a platform that stages small reads
// (hipsys.SmallReadStager), a single read of at most 4 KiB is an async copy into a
// pinned slot of the server's and a wait for its stream, made by Wait (smallread.go);
// otherwise, a single read of at most 64 KiB from a stream with
// nothing queued is one blocking copy, made by Wait; inside a capture window each
// descriptor gets a pinned pool slice and a fence follows the copies, as in CubeCL;
// anything else goes through the staging ring, the copies the free chunks hold queued
// now and the rest by Wait.
//
// The future holds its own reference to each buffer: the caller may release the
// bindings as soon as Read returns.
func (s *Server) Read(descs []CopyDescriptor, id StreamID) *ReadFuture {
	s.settleQueue()
	return s.read(descs, id, true)
}

// read is Read with the launch queue already settled. Without ring, the copies take
// pinned pool slices, as inside a capture window: a read its caller waits for under the
// owner's lock (a dynamic launch count) must not wait for a ring chunk, whose holder may
// need that lock to give it back.
func (s *Server) read(descs []CopyDescriptor, id StreamID, ring bool) *ReadFuture {
	f := futures.Get().(*ReadFuture)
	f.s, f.id = s, id
	// A read of one buffer, the common case, allocates nothing but the future.
	f.parts = f.one[:0]
	bs := s.one[:]
	if len(descs) != 1 {
		f.parts = make([]readPart, 0, len(descs))
		bs = make([]Binding, len(descs))
	}
	for i := range descs {
		bs[i] = descs[i].Binding
	}
	defer clear(bs)
	if f.err = s.streams.EnsureWritten(bs...); f.err != nil {
		return f
	}
	// A read on a stream that records a capture is refused before anything is queued,
	// as a Sync is: its copy would be recorded, not run, so its bytes could come only
	// from a replay, and the wait for it (a fence recorded in the capture, or a wait on
	// the stream) is illegal there and invalidates the capture, another goroutine's
	// included when ids share the device stream. Checked before Resolve, which would
	// make the recording hold the buffers.
	if st := s.streams.TryStream(id); st != nil && st.Capture.IsRecording() {
		f.err = fmt.Errorf("%w: read on stream %d while it records a capture: its work runs when the graph is replayed", stream.ErrGraphState, id)
		return f
	}
	r, err := s.streams.Resolve(id, bs)
	if err != nil {
		f.err = err
		return f
	}
	defer r.Close()
	st := r.Stream()
	f.sys = st.Sys
	var total uint64
	for _, d := range descs {
		if f.err = s.checkPart(f, d); f.err != nil {
			break
		}
		total += f.parts[len(f.parts)-1].l.bytes
	}
	switch {
	case st.Capture.IsRecording() || !ring:
		s.readStaged(st, f)
	case s.readSmall(f, total):
	case len(f.parts) == 1 && f.err == nil && !f.parts[0].l.pitched && total > 0 && total <= directRead &&
		(s.watch.knownIdle(st.Sys) || s.p.StreamQuery(st.Sys) == nil):
		f.direct = true
	case total > 0 && s.staging.open(s.p) != nil:
		s.readStaged(st, f) // no ring to be had: pinned pool slices, or the heap
	case total > 0:
		ls := make([]layout, len(f.parts))
		for i, p := range f.parts {
			ls[i] = p.l
		}
		f.cursor = newPieceCursor(ls, s.staging.chunk)
		for f.err == nil && f.cursor.more() && len(f.queued) < s.staging.depth {
			c := s.staging.take(false)
			if c == nil {
				break
			}
			f.err = f.queueNext(c)
		}
	}
	return f
}

// checkPart checks descriptor d and adds it to f's parts with a reference of its own.
func (s *Server) checkPart(f *ReadFuture, d CopyDescriptor) error {
	l, err := layoutOf(d)
	if err != nil {
		return err
	}
	ptr, size, err := s.streams.Resource(d.Binding)
	if err != nil {
		return err
	}
	if l.deviceSpan() > size {
		return fmt.Errorf("%w: read of %d bytes from a buffer of %d bytes", ErrOutOfBounds, l.deviceSpan(), size)
	}
	keep, err := d.Binding.Clone()
	if err != nil {
		return err
	}
	f.parts = append(f.parts, readPart{b: keep, ptr: ptr, l: l})
	return nil
}

// readStaged is the read inside a recording capture, the server's own reads, and any
// read when the ring cannot be had, as CubeCL makes it: one pinned pool
// slice per part, an async copy into each, and a fence recorded after them whatever
// happened, which the future waits for before it lets the slices go.
func (s *Server) readStaged(st *stream.Stream, f *ReadFuture) {
	f.staged = make([]*HostBuffer, 0, len(f.parts))
	for _, p := range f.parts {
		if f.err != nil {
			break
		}
		var buf *HostBuffer
		if buf, f.err = reserveHost(st, p.l.bytes, s.props.TotalMem); f.err != nil {
			break
		}
		f.staged = append(f.staged, buf)
		if p.l.bytes == 0 {
			continue
		}
		if !buf.Pinned() {
			// Differs from CubeCL (which requires pinned staging for reads): out of
			// pinned memory, the bytes come through a blocking copy into the heap
			// buffer, after the stream's earlier work, rather than failing the read.
			// Not while recording (a host wait would invalidate the capture), nor for
			// a pitched read (2D copies take platform memory only).
			if st.Capture.IsRecording() {
				f.err = fmt.Errorf("%w for a read of %d bytes: %w: inside a capture only the pinned memory its warm-up reserved can be used", ErrNoPinnedMemory, p.l.bytes, stream.ErrGraphState)
				break
			}
			if p.l.pitched {
				f.err = s.explain(fmt.Errorf("%w for a read of %d bytes", ErrNoPinnedMemory, p.l.bytes))
				break
			}
			if f.err = s.p.StreamSynchronize(st.Sys); f.err != nil {
				f.err = s.explain(fmt.Errorf("compute: read without staging: %w", f.err))
				break
			}
			f.err = s.p.MemcpyDtoH(buf.heap, p.ptr)
			continue
		}
		// SAFETY: the destination is pinned memory the future owns; it is released only
		// after the fence recorded after this copy has completed.
		f.err = s.copyPiece(st.Sys, buf.pinned.Ptr(), p.ptr, p.l, whole(p.l), hipsys.MemcpyDeviceToHost)
	}
	fence, ferr := stream.NewFence(s.p, st.Sys)
	if ferr != nil {
		// No fence: wait for the stream instead, so the staging is never released under
		// a running copy.
		f.err = errors.Join(f.err, ferr, s.p.StreamSynchronize(st.Sys))
	}
	f.fence = fence
}

// SyncFuture is an enqueued sync: a small value, so that a sync allocates nothing. Wait
// may be called from any goroutine, once.
type SyncFuture struct {
	err error
	s   *Server // nil: nothing to wait for
	id  StreamID
	sys hipsys.Stream
}

// Wait blocks until the stream's work up to the sync is done. A device fault that work
// ran into is returned here.
//
// The wait is the driver's own stream synchronization, one driver call, as cheap as a
// caller's direct hipStreamSynchronize. Differs from CubeCL, which records an event at
// the sync and waits for it (four driver calls with the event's creation and
// destruction, 1.3 times the driver's launch and sync on an H200): the stream-wide wait
// also waits for work another goroutine queued on the stream after the sync and before
// the wait began, and reports a fault of that work too. Both are work the caller could
// not have told apart from its own, queued on the same stream while it was not looking.
//
// What the wait learns goes to the stream's confirmations: a success confirms every
// write queued before the wait began (the point is taken just before the driver call,
// so the wait covers it); a failure leaves every write of the stream that no wait
// confirmed carrying it, those queued while the wait ran included. A stream-wide wait
// may report the fault of work queued after its point, and the cpu device, which a
// failed command does not damage, reports a failure to the first stream-wide wait past
// it and then forgets it: marking only the writes before the point would let the
// faulted one read as written.
func (f SyncFuture) Wait() error { return f.wait(false) }

// waitLocked is Wait for the server's own syncs, made under the owner's lock.
func (f SyncFuture) waitLocked() error { return f.wait(true) }

func (f SyncFuture) wait(locked bool) error {
	if f.err != nil || f.s == nil {
		return f.err
	}
	q := f.s.ledger.Of(f.sys)
	point := f.s.ledger.Mark()
	whole, err := f.s.watch.syncCovering(f.sys)
	if err != nil {
		err = fmt.Errorf("compute: wait for the stream: %w", err)
		f.s.failWait(f.id, q, math.MaxUint64, err, locked)
		return err
	}
	if !whole {
		// Another caller began a capture on the stream after this sync was made: the
		// wait covered the work before the capture (the ledger's capture guard), the work the sync
		// owes, and confirms nothing: writes recorded after it have not run.
		return nil
	}
	f.s.ledger.Confirm(q, point)
	if f.s.fault.Load() != nil {
		// A wait succeeded: the device is not refusing work (the cpu device recovers
		// from a fault), so later failures are their own.
		f.s.fault.Store(nil)
	}
	return nil
}

// Sync is CubeCL's sync: the claim check a read would make on handles, without the read
// (claims are set at enqueue time, so they are already in place), then a future that
// waits for stream id's work. Unlike CubeCL's, it first orders the handles' last writes
// on other streams before stream id (as a launch on id reading them would be), so the
// wait covers the work that writes them wherever it was queued.
//
// A Sync of a stream that is recording a capture is refused (stream.ErrGraphState),
// and the capture goes on untouched: the recorded work does not run until the graph is
// replayed, so there is nothing to wait for, and a host wait would invalidate the
// capture. Sync after EndCapture, or after a replay.
func (s *Server) Sync(handles []Binding, id StreamID) SyncFuture {
	s.settleQueue()
	if err := s.streams.EnsureWritten(handles...); err != nil {
		return SyncFuture{err: err}
	}
	// Checked before Resolve, which would make a recording capture hold the buffers.
	if st := s.streams.TryStream(id); st != nil && st.Capture.IsRecording() {
		return SyncFuture{err: fmt.Errorf("%w: sync of stream %d while it records a capture: its work runs when the graph is replayed", stream.ErrGraphState, id)}
	}
	// The buffers' last writes on other streams are ordered before the wait, so a Sync
	// with buffers covers the work that writes them wherever it was queued, not only
	// the work of stream id.
	r, err := s.streams.Resolve(id, handles)
	if err != nil {
		return SyncFuture{err: err}
	}
	_ = r.Close()
	// The borrowings still waiting for a fence (stream.pinBatch) get it now, before the
	// wait, and those of streams with nothing left to run go back at once (borrows.go):
	// a program that waits for its work sees the memory it borrowed given back.
	s.syncBorrowings(r.Stream())
	return SyncFuture{s: s, id: id, sys: r.Stream().Sys}
}
