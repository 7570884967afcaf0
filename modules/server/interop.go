package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// DevicePointer is the device address of the buffer's first byte, for handing the
// buffer's memory to another library (CuPy, PyTorch, a hand-written driver call) without
// copying it. On the cpu platform device memory is host memory, so the address is an
// ordinary host pointer.
//
// The address stays valid, and keeps naming this buffer's bytes, until Release: the
// pools never move a live allocation. It is not a reference of its own, so the caller
// must not Release the buffer while other work may still use the address.
//
// The Device does not see what another library does with the address, so the caller
// orders the two sides: Sync the buffer before other work reads or writes it (the
// buffer's own queued writes must be done), and finish that other work (synchronize its
// stream) before queueing more of the Device's work on the buffer or releasing it.
//
// A buffer whose last write failed returns that failure instead of an address: its bytes
// are not what the work that failed should have left there.
func (b *Buffer) DevicePointer() (hipsys.DevicePtr, error) {
	if b == nil || b.d == nil {
		return 0, fmt.Errorf("device pointer: %w: not a buffer a Device allocated", ErrInvalidArgument)
	}
	d := b.d
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	if err := d.own(b, "device pointer"); err != nil {
		return 0, err
	}
	// The buffer's own handle keeps the allocation until Release: no hold of the
	// pointer's own, which would outlive this call with nothing left to give it back.
	ptr, _, err := d.srv.ResourcePointer(b.b, b.stream)
	if err != nil {
		return 0, fmt.Errorf("device pointer of %v: %w", b, err)
	}
	return ptr, nil
}

// Device is the device the buffer's memory lives on: its Platform and Index say which
// device the address of DevicePointer belongs to.
func (b *Buffer) Device() *Device {
	if b == nil {
		return nil
	}
	return b.d
}

// OrderBefore hands the buffer to another library without a host wait (DLPack's and the
// CUDA array interface's export): foreign, a stream that library created (a CUstream on
// nvidia, a hipStream_t on amd; 0 is the null stream, and on nvidia 1 and 2 are CUDA's
// legacy and per-thread default streams), waits on the device for every write the
// Device queued to the buffer so far, on whichever stream it was queued, and for the
// work still queued on its other streams (any of it may read the buffer, which the other
// library may then write), and the call returns at once. The other library's work queued on foreign after this call then
// sees the buffer's bytes. A buffer whose last write failed returns that failure and
// nothing is ordered. The caller vouches that foreign is a live stream of this device,
// as it vouches for an address.
//
// On the cpu platform, whose memory is host memory read by host code, foreign must be 0
// and the call waits on the host for the buffer's writes (work of other streams still
// reading the buffer is the caller's to finish before host code writes it).
//
// The other direction, the other library's later writes to the memory, is the caller's
// to order before the Device's next use of the buffer (WaitForeign, or a host wait).
func (b *Buffer) OrderBefore(foreign uint64) error {
	if b == nil || b.d == nil {
		return fmt.Errorf("order before: %w: not a buffer a Device allocated", ErrInvalidArgument)
	}
	d := b.d
	if !d.srv.HasForeignStreams() {
		if foreign != 0 {
			return fmt.Errorf("order before stream %#x: %w: the %s platform has no streams of other libraries (0 waits on the host)", foreign, ErrInvalidArgument, d.Platform())
		}
		return d.On(b.stream).Sync(b)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.own(b, "order before"); err != nil {
		return err
	}
	if err := d.srv.OrderBefore([]compute.Binding{b.b}, b.stream, hipsys.Stream(foreign)); err != nil {
		return fmt.Errorf("order %v before stream %#x: %w", b, foreign, err)
	}
	return nil
}

// WaitForeign makes the stream wait on the device, without a host wait, for everything
// queued so far on foreign, a stream another library created (as for OrderBefore): the
// import side of the exchange, where that library wrote memory before handing it over
// (the CUDA array interface's "stream"). The stream's work queued after this call runs
// after that work. The cpu platform has no such streams: an error.
func (s Stream) WaitForeign(foreign uint64) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.srv.WaitForeign(s.id, hipsys.Stream(foreign)); err != nil {
		return fmt.Errorf("stream %d waiting for stream %#x: %w", s.id, foreign, err)
	}
	return nil
}

// ExportStream is the handle of a stream the Device owns and runs none of its own work
// on (a CUstream on nvidia, a hipStream_t on amd), for an export to name as the stream
// its consumer waits on: Buffer.OrderBefore it, then hand the handle out (the CUDA array
// interface's "stream"). It is made on first use and stays valid until Close; the other
// library must not destroy it. Handing out a working stream's NativeHandle instead would
// end, for the Device's life, every inference that keeps that stream fast. The cpu
// platform has none: an error.
func (d *Device) ExportStream() (uint64, error) {
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	st, err := d.srv.ExportStream()
	if err != nil {
		return 0, err
	}
	return uint64(st), nil
}
