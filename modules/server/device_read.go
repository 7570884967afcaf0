package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Read returns a copy of src's bytes. See ReadInto.
func (s Stream) Read(src *DeviceBuffer) ([]byte, error) {
	if src == nil {
		return nil, fmt.Errorf("read: %w: nil buffer", ErrInvalidArgument)
	}
	out := make([]byte, src.size)
	if err := s.ReadInto(out, src); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadInto copies the first len(dst) bytes of src into dst (ordinary Go memory) after
// the work queued before it that writes src, on this stream or the one that last wrote
// it. It first checks src: the bytes are only as good as the work that wrote them, so a
// buffer carrying a failure returns it and nothing is copied. The copy goes through
// pinned staging, chunk by chunk, the device filling one chunk while the host drains
// the one before; the waits happen outside the device's lock.
func (s Stream) ReadInto(dst []byte, src *DeviceBuffer) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	err := d.checkCopy(src, len(dst), "read")
	if err == nil {
		err = d.check1(src, s.id)
	}
	if err != nil || len(dst) == 0 {
		d.leave()
		return err
	}
	if d.recording(s.id) {
		// A host wait would invalidate the capture: let the server refuse or record it
		// as CubeCL does, and wait outside the lock.
		f := d.srv.Read([]CopyDescriptor{Linear(src.b, len(dst))}, s.id)
		d.unlockToWait()
		defer d.exit()
		data, err := f.Wait()
		if err == nil {
			copy(dst, data[0])
		}
		return err
	}
	if len(dst) <= directRead {
		if ptr, ok := d.idle(s.id, src); ok {
			d.unlockToWait()
			defer d.exit()
			// SAFETY: dst is Go memory, which a blocking copy may use: it is done with
			// it when MemcpyDtoH returns.
			if err := d.p.MemcpyDtoH(dst, ptr); err != nil {
				return fmt.Errorf("read of %d bytes: %w", len(dst), err)
			}
			return nil
		}
	}
	r, err := d.ring()
	d.unlockToWait()
	defer d.exit()
	if err != nil {
		return err
	}
	return d.pipelineRead(r, s.id, dst, src)
}

// directRead is the largest read that may skip the staging pipeline when the stream is
// idle: a blocking copy of a few bytes costs one driver call, where the pipeline costs
// an async copy, an event record and an event wait (on the cpu platform, a wake-up of
// the stream's worker as well). Differs from CubeCL, whose reads always go through
// pinned staging and a fence: the 4-byte round trip is held to 15% of the driver's own
// blocking copy.
const directRead = 64 << 10

// idle orders stream id after src's last write (on another stream) and reports src's
// address if the stream then has nothing queued, so that a blocking copy reads what
// that work wrote (d.mu held). A stream seen idle with nothing queued since is known
// idle without asking the driver (queuewatch.go). A stream with work pending, or a
// failure on the way, reports false, and the read takes the pipeline, which reports the
// failure.
func (d *Device) idle(id StreamID, src *DeviceBuffer) (hipsys.DevicePtr, bool) {
	ms := d.srv.streams
	d.one[0] = src.b
	r, err := ms.Resolve(id, d.one[:])
	d.one[0] = Binding{}
	if err != nil {
		return 0, false
	}
	defer r.Close()
	if sys := r.Stream().Sys; !d.watch.knownIdle(sys) && d.p.StreamQuery(sys) != nil {
		return 0, false
	}
	ptr, _, err := ms.Resource(src.b)
	return ptr, err == nil
}

// inflightRead is one chunk of a read: queued into slot, bound for dst[off:off+n].
type inflightRead struct {
	slot   *stagingSlot
	off, n int
}

// pipelineRead keeps up to the ring's depth of chunks queued, draining the oldest into
// dst while the device fills the others. Only the first chunk waits for a free slot:
// the others take what is free, so two concurrent reads never hold part of the ring
// each while waiting for the rest.
func (d *Device) pipelineRead(r *stagingRing, id StreamID, dst []byte, src *DeviceBuffer) error {
	var q [8]inflightRead
	head, count, next := 0, 0, 0
	depth := min(cap(r.free), len(q))
	var firstErr error
	for (next < len(dst) && firstErr == nil) || count > 0 {
		for firstErr == nil && next < len(dst) && count < depth {
			slot := r.take(count == 0)
			if slot == nil {
				break
			}
			n := min(int(r.chunk), len(dst)-next)
			err := slot.ready(d.p)
			if err == nil {
				err = d.enqueueRead(id, src, slot, uint64(next), uint64(n))
			}
			if err != nil {
				r.put(slot)
				firstErr = err
				break
			}
			q[(head+count)%len(q)] = inflightRead{slot: slot, off: next, n: n}
			count++
			next += n
		}
		if count == 0 {
			break
		}
		c := q[head]
		head, count = (head+1)%len(q), count-1
		err := c.slot.ready(d.p)
		if err == nil && firstErr == nil {
			copyParallel(dst[c.off:c.off+c.n], c.slot.buf[:c.n])
		}
		r.put(c.slot)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("read: %w", err)
		}
	}
	return firstErr
}

// enqueueRead queues one chunk's copy from src at off into slot and arms the slot's
// event behind it. It takes and lets go of the device's lock.
func (d *Device) enqueueRead(id StreamID, src *DeviceBuffer, slot *stagingSlot, off, n uint64) error {
	if err := d.relock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	if err := d.own(src, "read"); err != nil {
		return err
	}
	ms := d.srv.streams
	d.one[0] = src.b
	r, err := ms.Resolve(id, d.one[:])
	d.one[0] = Binding{}
	if err != nil {
		return err
	}
	defer r.Close()
	sys := r.Stream().Sys
	ptr, _, err := ms.Resource(src.b)
	if err != nil {
		return err
	}
	// SAFETY: slot is pinned C memory the ring owns; it is drained and reused only after
	// slot.ev, recorded right after this copy, has completed.
	if err := d.p.MemcpyDtoHAsync(slot.host, ptr+hipsys.DevicePtr(off), n, sys); err != nil {
		return fmt.Errorf("read of %d bytes at %d: %w", n, off, err)
	}
	return d.arm(slot, sys)
}
