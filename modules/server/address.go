package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Address is the device address of the buffer's first byte, for tracing a raw device
// pointer (an address a program kept, CuPy's MemoryPointer.ptr, an offset into an
// allocation) back to the live buffer it points into, so that a launch given it records
// its write on that buffer as on any argument: the pointer lies in b when it is in
// [Address, Address+Size).
//
// Unlike DevicePointer it hands nothing out: it orders nothing, makes no device call and
// returns the address of a buffer that carries a failure too (the launch that takes the
// pointer reports the failure). The address never changes while the buffer lives; a
// released buffer is ErrReleased, since its memory may already be another buffer's.
func (b *Buffer) Address() (hipsys.DevicePtr, error) {
	if b == nil || b.d == nil {
		return 0, fmt.Errorf("address: %w: not a buffer a Device allocated", ErrInvalidArgument)
	}
	d := b.d
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	if err := d.own(b, "address"); err != nil {
		return 0, err
	}
	base, _, err := d.srv.Address(b.b)
	if err != nil {
		return 0, fmt.Errorf("address of %v: %w", b, err)
	}
	return base, nil
}
