package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
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
	res, err := d.srv.GetResource(b.b, b.stream)
	if err != nil {
		return 0, fmt.Errorf("device pointer of %v: %w", b, err)
	}
	// The buffer's own handle keeps the allocation until Release; the resource's extra
	// hold would outlive this call with nothing left to give it back.
	_ = res.Release()
	return res.Ptr, nil
}

// Device is the device the buffer's memory lives on: its Platform and Index say which
// device the address of DevicePointer belongs to.
func (b *Buffer) Device() *Device {
	if b == nil {
		return nil
	}
	return b.d
}
