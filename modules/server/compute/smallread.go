package compute

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// smallRead is the largest read that a platform which stages small reads
// (hipsys.SmallReadStager) makes through a slot of pinned memory: an async copy into
// the slot on the read's stream, a wait for the stream, a copy out. On an H200 that is
// about 0.8 of a blocking copy into pageable memory for a few bytes (the platform's
// figures), and it needs no idle stream: a read after a launch waits for the launch in
// the same wait. Larger reads, up to directRead, keep the blocking copy when their stream
// is idle; the copy out of the slot is a host copy, which grows with the size.
const smallRead = 4 << 10

// readSlots is how many small reads may be in flight at once; one more takes the other
// paths (a blocking copy on an idle stream, else the staging ring).
const readSlots = 32

// slots is the pinned memory of small reads, readSlots slots of smallRead bytes,
// allocated on first use; each is held by one read from its copy's enqueue to its
// wait. A slot whose wait failed is never handed out again: its copy may still be in
// flight (a failed wait says nothing of it), as the staging ring's chunks stay armed.
type slots struct {
	mu   sync.Mutex
	host hipsys.HostPtr
	buf  []byte
	free uint32 // bit i set: slot i is free
	off  bool   // the platform does not stage small reads, or the allocation failed
}

// take is a free slot's index, or -1 when none is (or the server makes no slots).
func (r *slots) take(p hipsys.Platform) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off {
		return -1
	}
	if r.buf == nil {
		host, err := p.HostMalloc(readSlots*smallRead, hipsys.HostMallocDefault)
		if err != nil {
			r.off = true // the other paths need no pinned memory of their own
			return -1
		}
		r.host, r.buf, r.free = host, host.Bytes(readSlots*smallRead), 1<<readSlots-1
	}
	if r.free == 0 {
		return -1
	}
	i := bits.TrailingZeros32(r.free)
	r.free &^= 1 << i
	return i
}

func (r *slots) put(i int) {
	r.mu.Lock()
	r.free |= 1 << i
	r.mu.Unlock()
}

// at is slot i's host address and its first n bytes.
func (r *slots) at(i, n int) (hipsys.HostPtr, []byte) {
	off := i * smallRead
	return r.host + hipsys.HostPtr(off), r.buf[off : off+n]
}

// release frees the slots; the caller has made sure the device is idle.
func (r *slots) release(p hipsys.Platform) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf == nil {
		return nil
	}
	err := p.HostFree(r.host)
	r.host, r.buf, r.free, r.off = 0, nil, 0, true
	if err != nil {
		return fmt.Errorf("compute: read slots: %w", err)
	}
	return nil
}

// readSmall queues f's one small part into a slot on f's stream, when the platform
// stages small reads and a slot is free; false leaves f to the other paths.
func (s *Server) readSmall(f *ReadFuture, total uint64) bool {
	if !s.stagesSmallReads || len(f.parts) != 1 || f.err != nil || f.parts[0].l.pitched || total == 0 || total > smallRead {
		return false
	}
	i := s.slots.take(s.p)
	if i < 0 {
		return false
	}
	host, _ := s.slots.at(i, int(total))
	// SAFETY: the slot is pinned memory the server owns; it is read and handed out again
	// only after the stream's wait, in waitSmall. The copy is flagged where the platform
	// can (internal/ledger's flags.go): its wait comes next.
	if err := s.watch.copySmall(host, f.parts[0].ptr, total, f.sys); err != nil {
		s.slots.put(i) // nothing was queued into it
		f.err = fmt.Errorf("compute: read of %d bytes: %w", total, err)
		return true
	}
	f.slot = i + 1
	return true
}

// waitSmall finishes a read readSmall queued: the stream's wait, as Sync makes it (a
// success confirms the stream's writes before it; a failure leaves the unconfirmed ones
// carrying it), then the copy out of the slot.
func (f *ReadFuture) waitSmall(dst []byte) error {
	s, i := f.s, f.slot-1
	f.slot = 0
	if err := (SyncFuture{s: s, id: f.id, sys: f.sys}).Wait(); err != nil {
		return fmt.Errorf("compute: read of %d bytes: %w", len(dst), err)
	}
	if f.err == nil {
		_, src := s.slots.at(i, len(dst))
		copy(dst, src)
	}
	s.slots.put(i)
	return f.err
}
