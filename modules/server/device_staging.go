package server

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// stagingRing is the pinned memory that copies between Go memory and the device go
// through: depth chunks, each with an event that marks when the device last finished
// with it. A copy takes a chunk, waits for that event (outside the device's lock), fills
// or drains it on the host while the device works on the other chunks, and puts it back
// with a fresh event. That overlap of host copy and DMA is what lets a write from
// pageable Go memory run at twice the driver's own pageable rate: the driver stages
// pageable memory too, but one chunk at a time, and with one CPU thread.
//
// The free list is a channel so that any number of goroutines share the chunks without
// the device's lock: a call never waits for a chunk while it holds that lock, since the
// holder of the chunk may need the lock to finish with it.
type stagingRing struct {
	chunk uint64
	free  chan *stagingSlot
	all   []*stagingSlot
}

// stagingSlot is one pinned chunk.
type stagingSlot struct {
	host  hipsys.HostPtr
	buf   []byte
	ev    hipsys.Event
	armed bool // ev was recorded after the slot's last queued copy
}

// ring returns the device's staging, creating it on first use; d.mu is held.
func (d *Device) ring() (*stagingRing, error) {
	if d.staging != nil {
		return d.staging, nil
	}
	r := &stagingRing{chunk: d.opts.StagingChunk, free: make(chan *stagingSlot, d.opts.StagingDepth)}
	for range d.opts.StagingDepth {
		host, err := d.p.HostMalloc(r.chunk, hipsys.HostMallocDefault)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("staging: %w", err), r.release(d.p))
		}
		// Timing off: these events only order, and a timing event costs more to record.
		ev, err := d.p.EventCreateWithFlags(hipsys.EventDisableTiming)
		if err != nil {
			_ = d.p.HostFree(host)
			return nil, errors.Join(fmt.Errorf("staging: %w", err), r.release(d.p))
		}
		s := &stagingSlot{host: host, buf: host.Bytes(int(r.chunk)), ev: ev}
		r.all = append(r.all, s)
		r.free <- s
	}
	d.staging = r
	return r, nil
}

// take is a free chunk: waiting for one when wait is set, else nil when none is free.
func (r *stagingRing) take(wait bool) *stagingSlot {
	if wait {
		return <-r.free
	}
	select {
	case s := <-r.free:
		return s
	default:
		return nil
	}
}

// put gives a chunk back; its event, when armed, says when the device is done with it.
func (r *stagingRing) put(s *stagingSlot) { r.free <- s }

// ready waits for the device to finish with the chunk's last copy. It runs outside the
// device's lock.
func (s *stagingSlot) ready(p hipsys.Platform) error {
	if !s.armed {
		return nil
	}
	s.armed = false
	return p.EventSynchronize(s.ev)
}

// release frees every chunk; the caller has made sure no call holds one and the device
// is idle.
func (r *stagingRing) release(p hipsys.Platform) error {
	var errs []error
	for _, s := range r.all {
		errs = append(errs, p.EventDestroy(s.ev), p.HostFree(s.host))
	}
	r.all = nil
	return errors.Join(errs...)
}

// copyParallel is copy(dst, src) spread over the host's cores for large copies: one
// core copies 5–15 GB/s, less than a PCIe 5 link moves, so a single-threaded staging
// copy would be the pipeline's bottleneck.
func copyParallel(dst, src []byte) {
	const part = 1 << 20 // below this a goroutine costs more than it saves
	n := min(len(dst), len(src))
	workers := min(runtime.GOMAXPROCS(0), 8, n/part)
	if workers <= 1 {
		copy(dst, src)
		return
	}
	step := (n/workers + 63) &^ 63
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}
