package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/server"
)

//export cubehip_buffer_alloc
func cubehip_buffer_alloc(h C.cubehip_device, stream C.uint64_t, size C.uint64_t, out *C.cubehip_buffer) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_buffer_alloc: buffer is NULL"))
	}
	out.id = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	st, err := dev.stream(uint64(stream), "cubehip_buffer_alloc")
	if err != nil {
		return fail(err)
	}
	b, err := st.Alloc(uint64(size))
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(handles.add(kindBuffer, &buffer{dev: dev, b: b}))
	return success()
}

//export cubehip_buffer_release
func cubehip_buffer_release(h C.cubehip_buffer) C.cubehip_status {
	obj, ok := handles.remove(uint64(h.id), kindBuffer)
	if !ok {
		return fail(handleError{k: kindBuffer, id: uint64(h.id)})
	}
	b := obj.(*buffer)
	b.dev.trim.schedule(b.dev)
	return result(b.b.Release())
}

//export cubehip_buffer_recycle
func cubehip_buffer_recycle(h C.cubehip_buffer, kept *C.int32_t) C.cubehip_status {
	if kept == nil {
		return fail(argError("cubehip_buffer_recycle: kept is NULL"))
	}
	*kept = 0
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	k, err := b.b.Recycle()
	if err != nil {
		return fail(err)
	}
	if k {
		*kept = 1
		return success()
	}
	// Released: the handle goes, as cubehip_buffer_release's does. A release racing this
	// call on another thread removed it already and returned the buffer's ErrReleased.
	handles.remove(uint64(h.id), kindBuffer)
	b.dev.trim.schedule(b.dev)
	return success()
}

//export cubehip_buffer_size
func cubehip_buffer_size(h C.cubehip_buffer, size *C.uint64_t) C.cubehip_status {
	if size == nil {
		return fail(argError("cubehip_buffer_size: size is NULL"))
	}
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	*size = C.uint64_t(b.b.Size())
	return success()
}

// hostBytes views n bytes of host memory the caller passed, for the length of the call.
func hostBytes(p unsafe.Pointer, n C.uint64_t, what string) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, argError(what + " is NULL")
	}
	if uint64(n) > 1<<48 {
		return nil, argError(fmt.Sprintf("%s: size %d is beyond any address space", what, uint64(n)))
	}
	return unsafe.Slice((*byte)(p), int(n)), nil
}

//export cubehip_buffer_write
func cubehip_buffer_write(h C.cubehip_buffer, stream C.uint64_t, offset C.uint64_t, src *C.capi_cvoid, size C.uint64_t) C.cubehip_status {
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	data, err := hostBytes(unsafe.Pointer(src), size, "cubehip_buffer_write: src")
	if err != nil {
		return fail(err)
	}
	if err := span(b, offset, size, "cubehip_buffer_write"); err != nil {
		return fail(err)
	}
	if err := b.dev.caps.refuseWrite(uint64(stream), "cubehip_buffer_write"); err != nil {
		return fail(err)
	}
	return result(b.dev.d.On(server.StreamID(stream)).WriteAt(b.b, uint64(offset), data))
}

//export cubehip_buffer_read
func cubehip_buffer_read(h C.cubehip_buffer, stream C.uint64_t, offset C.uint64_t, dst unsafe.Pointer, size C.uint64_t) C.cubehip_status {
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	data, err := hostBytes(dst, size, "cubehip_buffer_read: dst")
	if err != nil {
		return fail(err)
	}
	if err := span(b, offset, size, "cubehip_buffer_read"); err != nil {
		return fail(err)
	}
	st, err := b.dev.stream(uint64(stream), "cubehip_buffer_read")
	if err != nil {
		return fail(err)
	}
	return result(st.ReadAt(data, b.b, uint64(offset)))
}

//export cubehip_buffer_check
func cubehip_buffer_check(h C.cubehip_buffer) C.cubehip_status {
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	return result(b.dev.d.On(b.b.Stream()).Check(b.b))
}

//export cubehip_buffer_sync
func cubehip_buffer_sync(h C.cubehip_buffer) C.cubehip_status {
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	return result(b.dev.d.On(b.b.Stream()).Sync(b.b))
}
