package server

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// Stream is one of a Device's logical streams: work on one stream runs in order, work
// on different streams may overlap, and a stream waits for the last write of every
// buffer it is given that another stream wrote. Ids are spread over the device's streams
// by id % Options.MaxStreams, so two ids may share one. A Stream is a small value,
// created by Device.On; it is safe to use from any number of goroutines.
type Stream struct {
	d  *Device
	id StreamID
}

// On returns stream id of the device; the device stream behind it is created on its
// first use.
func (d *Device) On(id StreamID) Stream { return Stream{d: d, id: id} }

// ID is the stream's id.
func (s Stream) ID() StreamID { return s.id }

// Device is the device the stream belongs to.
func (s Stream) Device() *Device { return s.d }

// Sync waits for the work queued on the stream so far. With buffers it first checks
// them as Check does and returns the failure one of them carries, without waiting. A
// device fault the work ran into is returned. The wait happens outside the device's lock.
//
// The wait is the driver's stream synchronization (hipStreamSynchronize), one driver
// call, so a launch and a Sync cost what they cost a program calling the driver itself.
// On nvidia, where the stream's last work was a launch the Device expected to be waited
// for (the pattern of a launch-and-sync loop), the launch was followed by a write the
// stream makes to host memory, and Sync spins on that instead, which returns sooner
// (docs/benchmarks.md has the figures): everything queued on the stream up to that
// launch is then done. A stream whose native handle was handed out (NativeHandle) is
// never waited for that way: anything may have been queued on it since, so Sync is the driver's own wait, and it covers every piece of work queued
// on the stream before it, the other library's included. Work that another goroutine queues on the same stream while Sync is starting its wait
// may be waited for too, and a fault of that work returned. A Sync of a stream
// recording a capture is refused (ErrCaptureState) and the capture goes on: the
// recorded work runs only when the graph is replayed.
//
// Sync reports the failures of the work queued on the stream's device stream since its
// last Sync, as a CUDA stream's synchronization does: the first of them, once, whether
// or not the call that queued it returned it (a launch that did not compile, one the
// driver refused or whose input carried a failure, a failed write) and whether or not
// a read has reported it since (a kernel that faulted on the device). A device fault
// that leaves the device refusing work (a GPU's) is returned by every Sync, the
// driver's wait reporting it each time. The buffers keep carrying every failure: a
// Sync reports, it clears nothing.
func (s Stream) Sync(bufs ...*Buffer) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	bs, err := d.bindings(bufs, "sync")
	if err != nil {
		d.leave()
		return err
	}
	f := d.srv.Sync(bs, s.id)
	before := d.srv.TakeFailure(s.id)
	clear(bs)
	d.unlockToWait()
	defer d.exit()
	return syncResult(d.srv, s.id, f.Wait(), before)
}

// syncResult is a Sync's error: the wait's, and the failure of the work queued on the
// stream since its last Sync taken before the wait (before), which the call that queued
// it may have returned, or a read reported, but a caller that only syncs would
// otherwise never see. A failure noted while the wait ran is taken too: the wait's own
// (reported here as the wait's error, not twice) or that of work another goroutine
// queued meanwhile, which the wait covered.
func syncResult(srv *compute.Server, id StreamID, wait, before error) error {
	during := srv.TakeFailure(id)
	if wait != nil {
		return fmt.Errorf("sync of stream %d: %w", id, errors.Join(wait, before))
	}
	if before == nil {
		before = during
	}
	if before != nil {
		return fmt.Errorf("sync of stream %d: work queued since the last sync failed: %w", id, before)
	}
	return nil
}

// Check returns the failure the first of bufs carries: the error of the write, launch
// or replay that should have written it and did not. It does not touch the device and
// does not wait: work still running is judged by whether it was enqueued.
//
// Failures travel with the buffers. Work on the device runs after the call that queued
// it has returned, so its failure cannot be that call's result. Instead, a failure of a
// write, a launch or a replay is carried by the buffers that work would have written: a
// carried failure. Reading such a buffer (Read, Sync with it, Check) returns the error
// that left it unwritten, never bytes that nothing wrote; a launch that reads it does
// not run, and its outputs carry the same failure on; rewriting the buffer (a Write, or
// a launch that writes it from clean inputs) clears it. Buffers the failed work did not
// touch are untouched. A call returns an error itself only when it was refused before
// anything ran: a released or foreign buffer, a malformed launch, a copy larger than its
// buffer.
//
// A device fault is reported late: a kernel that traps or reads out of bounds on a
// GPU (on the cpu device, a command that fails on its worker) returns nothing to the
// launch that queued it, and the device reports the fault at the next wait that goes
// past it, without saying which work failed. So a wait that succeeds (a Sync, or the
// wait for a staging chunk inside a Read or Write) confirms every write, launch and
// replay queued on its stream before it, and a wait that fails fails the call that
// waits and leaves every buffer written on that stream since its last successful wait
// carrying the failure: the faulted work's outputs, and the outputs of work queued
// after it, whose bytes the device may not have produced (a GPU's fault ends its
// context for good; the cpu device recovers once the fault is reported). None of them
// returns bytes that nothing wrote; a buffer a Sync confirmed, and every input, keeps
// its bytes. Sync after work whose failure should stay its own.
func (s Stream) Check(bufs ...*Buffer) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	bs, err := d.bindings(bufs, "check")
	if err != nil {
		return err
	}
	err = d.srv.Check(bs, s.id)
	clear(bs)
	return err
}

// Flush hands the stream's finished staging back and runs its deferred frees. It may
// wait for the stream's earlier copies, under the lock. Its result is always nil:
// failures live on buffers.
func (s Stream) Flush() error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.Flush(s.id)
}

// Read returns a copy of src's bytes. See ReadInto.
func (s Stream) Read(src *Buffer) ([]byte, error) {
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
// the one before; the waits happen outside the device's lock. A small read is one
// copy: on nvidia, a read of up to 4 KiB is an async copy into pinned memory and a
// wait for the stream (faster there than the driver's blocking copy into pageable
// memory); elsewhere a small read of a stream with nothing queued is a blocking copy.
func (s Stream) ReadInto(dst []byte, src *Buffer) error { return s.ReadAt(dst, src, 0) }

// ReadAt is ReadInto of the len(dst) bytes of src that start offset bytes in. A range
// past src's end is ErrOutOfBounds and copies nothing.
func (s Stream) ReadAt(dst []byte, src *Buffer, offset uint64) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	if err := d.checkCopy(src, offset, len(dst), "read"); err != nil || len(dst) == 0 {
		if err == nil {
			err = d.srv.Check([]compute.Binding{src.b}, s.id)
		}
		d.leave()
		return err
	}
	start, traced := d.traceBegin(s.id)
	f := d.srv.Read(d.linear(src, offset, len(dst)), s.id)
	d.desc[0] = compute.CopyDescriptor{}
	d.unlockToWait()
	defer d.exit()
	err := f.WaitInto(dst)
	if traced {
		d.traceEndAfterWait(s.id, "copy", fmt.Sprintf("read %d B", len(dst)), start)
	}
	return err
}

// Write copies data (ordinary Go memory) into the start of dst, through pinned staging:
// chunk by chunk, each host copy overlapping the device's copy of the chunk before it.
// data may be reused as soon as Write returns; the device copies may still be running,
// ordered before any later work on the stream and, through dst's last write, on every
// other stream.
//
// A copy that fails leaves dst carrying the failure, and Write returns it too; a
// successful Write releases a failure dst carried, since it rewrote the bytes. More data
// than dst holds, a released or foreign buffer are errors that change nothing. While the
// stream has a capture window open, the bytes are staged in pinned memory that the
// graph keeps, so that each replay copies the bytes the recording saw.
func (s Stream) Write(dst *Buffer, data []byte) error { return s.WriteAt(dst, 0, data) }

// WriteAt is Write into the bytes of dst that start offset bytes in. A range past dst's
// end is ErrOutOfBounds and changes nothing. The rest of dst keeps its bytes (a failed
// copy still leaves the whole buffer carrying the failure: failures are kept per
// allocation).
func (s Stream) WriteAt(dst *Buffer, offset uint64, data []byte) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	if err := d.checkCopy(dst, offset, len(data), "write"); err != nil || len(data) == 0 {
		d.leave()
		return err
	}
	start, traced := d.traceBegin(s.id)
	d.op[0] = compute.WriteOp{Desc: d.linear(dst, offset, len(data))[0], Data: data}
	f := d.srv.Write(d.op[:], s.id)
	d.op[0] = compute.WriteOp{}
	d.desc[0] = compute.CopyDescriptor{}
	d.unlockToWait()
	defer d.exit()
	err := f.Wait()
	if traced {
		d.traceEndAfterWait(s.id, "copy", fmt.Sprintf("write %d B", len(data)), start)
	}
	return err
}

// unitStride is the strides of every linear copy; never written.
var unitStride = []int{1}

// linear describes n bytes of b from offset in the Device's scratch descriptor, which
// the caller clears: compute.Linear would allocate its shape on every copy. The range
// was checked (checkCopy).
func (d *Device) linear(b *Buffer, offset uint64, n int) []compute.CopyDescriptor {
	d.shape[0] = n
	bind := b.b
	if offset > 0 {
		_ = bind.Narrow(offset, 0) // within b: checkCopy
	}
	d.desc[0] = compute.CopyDescriptor{Binding: bind, Shape: d.shape[:], Strides: unitStride, ElemSize: 1}
	return d.desc[:]
}

// checkCopy checks a copy of n bytes to or from b from offset (d.mu held).
func (d *Device) checkCopy(b *Buffer, offset uint64, n int, what string) error {
	if err := d.own(b, what); err != nil {
		return err
	}
	if offset > b.size || uint64(n) > b.size-offset {
		return fmt.Errorf("%s: %w: %d bytes at offset %d, %v", what, ErrOutOfBounds, n, offset, b)
	}
	return nil
}
