package compute

import (
	"errors"
	"fmt"
	"math"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute/internal/ledger"
	"github.com/cubehip/cubehip/modules/stream"
)

// Staging is the pinned host memory every copy between Go memory and the device goes
// through, in one of two forms, chosen per copy by [Server.Read] and [Server.Write]:
//
//   - The ring: a few pinned chunks the server keeps, each with an event that marks when
//     the device last finished with it. A copy takes a chunk, waits for that event,
//     fills or drains it on the host while the device works on the other chunks, and
//     puts it back with a fresh event. That overlap of host copy and DMA is what lets a
//     copy from pageable Go memory run at twice the driver's own pageable rate (the
//     driver stages pageable memory too, but one chunk at a time, on one CPU thread),
//     with pinned memory bounded whatever the size. Every copy outside a capture window
//     takes the ring.
//   - A pinned slice from the stream's pinned pools, held for the copy alone (CubeCL's
//     reserve_pinned): what a copy inside a capture window takes, since a recorded copy
//     reads or writes the same host bytes on every replay, so they must live as long as
//     the graph (the capture retains them), and since the warm-up run must grow the
//     pools to what the recording needs. [Server.Staging] hands these out to callers.
//
// The ring's free list is a channel so that any number of futures share the chunks
// without the owner's lock: nothing waits for a chunk while it holds that lock (the
// holder of the chunk may need the lock to finish with it), so a call takes only the
// chunks free at the moment and its future waits for the rest.
type ring struct {
	chunk uint64
	depth int
	free  chan *chunk // nil until the first copy allocates the chunks
	all   []*chunk
}

// chunk is one pinned chunk of the ring.
type chunk struct {
	host  hipsys.HostPtr
	buf   []byte
	ev    hipsys.Event
	armed bool // ev was recorded after the chunk's last queued copy

	// The stream of the chunk's last copy and the point its event marks there: the
	// wait for the event confirms the writes on that stream before the point, or
	// leaves them carrying its failure (the ledger's confirmations).
	on      StreamID
	onState *ledger.Stream
	at      uint64
}

func newRing(size uint64, depth int) *ring { return &ring{chunk: size, depth: depth} }

// open allocates the ring's chunks on first use (the owner's call holds the lock).
func (r *ring) open(p hipsys.Platform) error {
	if r.free != nil {
		return nil
	}
	free := make(chan *chunk, r.depth)
	for range r.depth {
		host, err := p.HostMalloc(r.chunk, hipsys.HostMallocDefault)
		if err != nil {
			return errors.Join(fmt.Errorf("compute: staging: %w", err), r.release(p))
		}
		// Timing off: these events only order, and a timing event costs more to record.
		ev, err := p.EventCreateWithFlags(hipsys.EventDisableTiming)
		if err != nil {
			_ = p.HostFree(host)
			return errors.Join(fmt.Errorf("compute: staging: %w", err), r.release(p))
		}
		c := &chunk{host: host, buf: host.Bytes(int(r.chunk)), ev: ev}
		r.all = append(r.all, c)
		free <- c
	}
	r.free = free
	return nil
}

// take is a free chunk: waiting for one when wait is set, else nil when none is free.
func (r *ring) take(wait bool) *chunk {
	if wait {
		return <-r.free
	}
	select {
	case c := <-r.free:
		return c
	default:
		return nil
	}
}

// put gives a chunk back; its event, when armed, says when the device is done with it.
func (r *ring) put(c *chunk) { r.free <- c }

// takeIdle is a chunk the device is done with, or nil: a chunk whose last copy may still
// run goes back to the ring, since its taker would wait for that copy where it stands
// (under the owner's lock, in a write's call). A query that fails says nothing either
// way: the chunk goes back too, for a wait that reports the failure (ready).
func (r *ring) takeIdle(p hipsys.Platform) *chunk {
	c := r.take(false)
	if c == nil || !c.armed || p.EventQuery(c.ev) == nil {
		return c
	}
	r.put(c)
	return nil
}

// ready waits for the device to finish with c's last copy. The wait is one of the
// points that confirm the stream's writes (the ledger's confirmations): when it succeeds, the
// writes on the chunk's stream before its event are confirmed.
//
// When it fails, the failure is returned (the caller's own work cannot use the chunk),
// but an event wait's failure names no work: the wait itself may have failed, and the
// chunk's last copy may be another caller's, on another stream. So the chunk's stream
// is asked with the driver's own stream-wide wait, which is what reports a fault of
// work on it: if that succeeds, everything queued there is done and confirmed, and no
// bystander's write is blamed; if it fails, the writes there that no wait had confirmed
// are left carrying its failure (taking the owner's lock unless the caller holds it,
// locked), as a failed Sync leaves them.
func (s *Server) ready(c *chunk, locked bool) error {
	if !c.armed {
		return nil
	}
	err := s.p.EventSynchronize(c.ev)
	// A failed wait says nothing of whether the copy has finished: the chunk stays
	// armed, so whoever takes it next waits again instead of filling or draining it
	// under a copy still in flight (a read would return that copy's bytes).
	c.armed = err != nil
	on, onState, at := c.on, c.onState, c.at
	c.at = 0
	if err != nil {
		err = fmt.Errorf("compute: staging: %w", err)
		if at == 0 {
			return err
		}
		point := s.ledger.Mark()
		if serr := s.watch.syncQuiet(onState.Sys()); serr != nil {
			s.failWait(on, onState, math.MaxUint64, fmt.Errorf("compute: staging: wait for stream %d: %w", on, serr), locked)
			return err
		}
		// The stream finished everything queued on it, the chunk's copy included.
		s.ledger.Confirm(onState, point)
		c.armed = false
		return err
	}
	if at != 0 {
		s.ledger.Confirm(onState, at)
	}
	return nil
}

// arm records c's event on sys, stream id's, behind the copy just queued. Without the
// event the chunk could be refilled under the running copy, so a failed record waits
// for the stream.
func (c *chunk) arm(s *Server, id StreamID, sys hipsys.Stream) error {
	if err := s.p.EventRecord(c.ev, sys); err != nil {
		return errors.Join(fmt.Errorf("compute: staging event: %w", err), s.p.StreamSynchronize(sys))
	}
	c.armed = true
	c.on, c.onState, c.at = id, s.ledger.Of(sys), s.ledger.Mark()
	return nil
}

// release frees every chunk; the caller has made sure no copy holds one and the device
// is idle.
func (r *ring) release(p hipsys.Platform) error {
	var errs []error
	for _, c := range r.all {
		errs = append(errs, p.EventDestroy(c.ev), p.HostFree(c.host))
	}
	r.all, r.free = nil, nil
	return errors.Join(errs...)
}

// HostBuffer is a host buffer from Staging: pinned memory from the stream's pinned pools
// when it could be had, else ordinary heap memory (CubeCL's reserve_cpu). Release a
// pinned one once no queued copy uses it.
type HostBuffer struct {
	pinned *stream.Staging
	heap   []byte
}

// Bytes views the buffer; valid until Release. Never nil.
func (b *HostBuffer) Bytes() []byte {
	if b.pinned != nil {
		return b.pinned.Bytes()
	}
	if b.heap == nil {
		return []byte{}
	}
	return b.heap
}

// Pinned reports whether the buffer is pinned (an async copy may use it).
func (b *HostBuffer) Pinned() bool { return b.pinned != nil }

// Release gives a pinned buffer back to its pool; a heap buffer is left to the garbage
// collector. Safe from any goroutine; a second Release does nothing.
func (b *HostBuffer) Release() error {
	if b.pinned == nil {
		b.heap = nil
		return nil
	}
	err := b.pinned.Release()
	b.pinned = nil
	return err
}

// reserveHost is reserve_cpu: pinned first, zeroed heap memory when that fails. The
// heap fallback is refused (ErrNoPinnedMemory) beyond limit bytes, the device's memory:
// no copy to or from the device is larger, and a larger heap request could only end
// the process (the Go runtime's out-of-memory is fatal) or panic (makeslice).
func reserveHost(st *stream.Stream, size, limit uint64) (*HostBuffer, error) {
	pb, err := st.ReservePinned(size)
	if err == nil {
		return &HostBuffer{pinned: pb}, nil
	}
	if size > limit || size > math.MaxInt {
		return nil, fmt.Errorf("%w: %d bytes, more than the device's %d: %w", ErrNoPinnedMemory, size, limit, err)
	}
	return &HostBuffer{heap: make([]byte, size)}, nil
}

// Staging is CubeCL's staging: one host buffer per size from stream id's pinned pools,
// each falling back to the heap when pinned memory runs out. It fails for a stream that
// cannot be created, or a size neither pinned nor heap memory can hold
// (ErrNoPinnedMemory), leaving nothing reserved. The caller releases each buffer.
func (s *Server) Staging(sizes []uint64, id StreamID) ([]*HostBuffer, error) {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]*HostBuffer, 0, len(sizes))
	for _, n := range sizes {
		b, err := reserveHost(r.Stream(), n, s.props.TotalMem)
		if err != nil {
			for _, b := range out {
				_ = b.Release()
			}
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
