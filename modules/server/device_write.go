package server

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// Write copies data (ordinary Go memory) into the start of dst, through pinned staging:
// chunk by chunk, each host copy overlapping the device's copy of the chunk before it.
// data may be reused as soon as Write returns; the device copies may still be running,
// ordered before any later work on the stream and, through dst's last write, on every
// other stream.
//
// A copy that fails leaves dst carrying the failure, as the Server's write does, and
// Write returns it too; a successful Write releases a failure dst carried, since it
// rewrote the bytes. More data than dst holds, a released or foreign buffer are errors
// that enqueue nothing. While the stream has a capture window open, the bytes go
// through the Server's own staging: in the warm-up run, so that its pinned pools grow to
// what the recording needs (an allocation inside the recording would invalidate it), and
// in the recording, so that the graph keeps the bytes it captured for as long as it
// lives (the Device's ring is refilled by the next copy).
//
// Differs from CubeCL: CubeCL stages a whole upload into one pinned buffer, then copies
// it; here the staging is a ring of chunks the Device owns, so the host copy of one chunk
// overlaps the DMA of the one before (DESIGN's budget: twice the driver's pageable
// rate), and pinned memory stays bounded whatever the size. An oversized copy is
// refused before anything runs rather than tainting dst (DESIGN §Semantics 4: it is
// the caller's input that is wrong, not the work).
func (s Stream) Write(dst *DeviceBuffer, data []byte) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	if err := d.checkCopy(dst, len(data), "write"); err != nil || len(data) == 0 {
		d.leave()
		return err
	}
	if d.capturing(s.id) {
		defer d.leave()
		d.srv.Write([]WriteOp{{Desc: Linear(dst.b, len(data)), Data: data}}, s.id)
		return d.check1(dst, s.id)
	}
	r, err := d.ring()
	d.unlockToWait()
	defer d.exit()
	if err != nil {
		return err
	}
	for off := 0; off < len(data); {
		n := min(int(r.chunk), len(data)-off)
		slot := r.take(true)
		if err := slot.ready(d.p); err != nil {
			r.put(slot)
			return fmt.Errorf("write: staging: %w", err)
		}
		copyParallel(slot.buf[:n], data[off:off+n])
		err := d.enqueueWrite(s.id, dst, slot, uint64(off), uint64(n))
		r.put(slot)
		if err != nil {
			// Stop at the first failure: a later chunk's success would release the
			// failure this one left on dst, and dst would read back half written.
			return err
		}
		off += n
	}
	return nil
}

// enqueueWrite queues one chunk's copy from slot into dst at off, in a write scope over
// dst, and arms the slot's event behind it. It takes and lets go of the device's lock.
func (d *Device) enqueueWrite(id StreamID, dst *DeviceBuffer, slot *stagingSlot, off, n uint64) error {
	if err := d.relock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	if err := d.own(dst, "write"); err != nil {
		return err
	}
	ms := d.srv.streams
	d.one[0] = dst.b
	err := ms.Over(id, d.one[:]).Execute(func() error {
		r, err := ms.Resolve(id, d.one[:])
		if err != nil {
			return err
		}
		defer r.Close()
		sys := r.Stream().Sys
		ptr, _, err := ms.Resource(dst.b)
		if err != nil {
			return err
		}
		// SAFETY: slot is pinned C memory the ring owns; it is refilled only after
		// slot.ev, recorded right after this copy, has completed.
		if err := d.p.MemcpyHtoDAsync(ptr+hipsys.DevicePtr(off), slot.host, n, sys); err != nil {
			return fmt.Errorf("write of %d bytes at %d: %w", n, off, err)
		}
		return d.arm(slot, sys)
	})
	d.one[0] = Binding{}
	return err
}

// arm records slot's event on sys behind the copy just queued. Without the event the
// slot could be refilled under the running copy, so a failed record waits for the
// stream instead.
func (d *Device) arm(slot *stagingSlot, sys hipsys.Stream) error {
	if err := d.p.EventRecord(slot.ev, sys); err != nil {
		return errors.Join(fmt.Errorf("staging event: %w", err), d.p.StreamSynchronize(sys))
	}
	slot.armed = true
	return nil
}

// checkCopy checks a copy of n bytes to or from b (d.mu held).
func (d *Device) checkCopy(b *DeviceBuffer, n int, what string) error {
	if err := d.own(b, what); err != nil {
		return err
	}
	if uint64(n) > b.size {
		return fmt.Errorf("%s: %w: %d bytes, %v", what, ErrOutOfBounds, n, b)
	}
	return nil
}

// check1 is the failure b carries (d.mu held).
func (d *Device) check1(b *DeviceBuffer, id StreamID) error {
	d.one[0] = b.b
	err := d.srv.Check(d.one[:], id)
	d.one[0] = Binding{}
	return err
}

// recording reports whether stream id records a capture (d.mu held).
func (d *Device) recording(id StreamID) bool {
	st := d.srv.streams.TryStream(id)
	return st != nil && st.Capture.IsRecording()
}

// capturing reports whether stream id has a capture window open, prepared or recording
// (d.mu held).
func (d *Device) capturing(id StreamID) bool {
	st := d.srv.streams.TryStream(id)
	return st != nil && st.Capture.State() != stream.CaptureNone
}
