package main

/*
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/server"
)

// bufferAt finds the live buffer of dev whose memory holds ptr, its handle's id and ptr's byte in it: a raw
// device pointer traced back to the allocation it names, so that a launch given it records
// its writes on that buffer (whose next read then reports a failure of the launch) as for a
// buffer argument. It fails closed: an address in no live buffer of dev (a released
// buffer's, whose memory may already be another's; another device's; memory cubehip did not
// allocate or import) is an error saying so, never a pointer passed on unchecked.
//
// It looks at every live buffer (of every device, skipping others'), each address asked of
// the Device once and then kept on the buffer: a raw pointer costs a scan of the live
// buffers, an argument made from a buffer handle nothing. Where two live buffers hold the
// address (an import of memory another buffer also names), the first found is taken: both
// name the same bytes.
func bufferAt(dev *device, ptr uint64, what string) (*buffer, uint64, uint64, error) {
	if ptr == 0 {
		return nil, 0, 0, argError(what + ": a null pointer names no buffer")
	}
	var found *buffer
	var off, foundID uint64
	var lookErr error
	handles.each(func(id uint64, obj any) bool {
		b, ok := obj.(*buffer)
		if !ok || b.dev != dev {
			return true
		}
		base := b.addr.Load()
		if base == 0 {
			p, err := b.b.Address()
			if err != nil {
				if !errors.Is(err, server.ErrReleased) && !errors.Is(err, server.ErrClosed) {
					lookErr = err
				}
				return true
			}
			base = uint64(p)
			b.addr.Store(base)
		}
		if ptr >= base && ptr-base < b.b.Size() {
			found, off, foundID = b, ptr-base, id
			return false
		}
		return true
	})
	if found != nil {
		return found, foundID, off, nil
	}
	msg := fmt.Sprintf("%s: address %s lies in no live buffer of device %s (a released buffer's memory, another device's, "+
		"or memory this library did not allocate or import: import another library's memory with cubehip_buffer_import)",
		what, hex(ptr), dev.d)
	if lookErr != nil {
		msg += fmt.Sprintf("; a buffer's address could not be read: %v", lookErr)
	}
	return nil, 0, 0, argError(msg)
}

//export cubehip_buffer_at
func cubehip_buffer_at(h C.cubehip_device, ptr C.uint64_t, out *C.cubehip_buffer, offset *C.uint64_t) C.cubehip_status {
	if out == nil || offset == nil {
		return fail(argError("cubehip_buffer_at: out or offset is NULL"))
	}
	*out, *offset = C.cubehip_buffer{}, 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	_, id, off, err := bufferAt(dev, uint64(ptr), "cubehip_buffer_at")
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(id)
	*offset = C.uint64_t(off)
	return success()
}
