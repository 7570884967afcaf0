package main

/*
#include "capi.h"

// capi_call_release calls an import's release: Go cannot call a C function pointer.
static void capi_call_release(cubehip_release_fn f, void* user_data) { f(user_data); }
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

//export cubehip_buffer_import
func cubehip_buffer_import(h C.cubehip_device, stream C.uint64_t, ptr C.uint64_t, nbytes C.uint64_t, release C.cubehip_release_fn, userData unsafe.Pointer, out *C.cubehip_buffer) C.cubehip_status {
	return importBuffer("cubehip_buffer_import", h, stream, ptr, nbytes, release, userData, 0, out)
}

//export cubehip_buffer_import_flags
func cubehip_buffer_import_flags(h C.cubehip_device, stream C.uint64_t, ptr C.uint64_t, nbytes C.uint64_t, release C.cubehip_release_fn, userData unsafe.Pointer, flags C.uint32_t, out *C.cubehip_buffer) C.cubehip_status {
	return importBuffer("cubehip_buffer_import_flags", h, stream, ptr, nbytes, release, userData, flags, out)
}

// importBuffer is cubehip_buffer_import with flags (CUBEHIP_IMPORT_*).
func importBuffer(fn string, h C.cubehip_device, stream C.uint64_t, ptr C.uint64_t, nbytes C.uint64_t, release C.cubehip_release_fn, userData unsafe.Pointer, flags C.uint32_t, out *C.cubehip_buffer) C.cubehip_status {
	if out == nil {
		return fail(argError(fn + ": out is NULL"))
	}
	out.id = 0
	var opts []server.ImportOption
	switch flags {
	case 0:
	case C.CUBEHIP_IMPORT_RELEASE_ON_CALLER:
		opts = append(opts, server.ReleaseOnCaller)
	default:
		return fail(argError(fmt.Sprintf("%s: unknown flags %#x (CUBEHIP_IMPORT_RELEASE_ON_CALLER is %#x)", fn, uint32(flags), uint32(C.CUBEHIP_IMPORT_RELEASE_ON_CALLER))))
	}
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	var rel func()
	if release != nil {
		// user_data is the host's C pointer: Go never reads it,
		// and hands it back as it was given.
		rel = func() { C.capi_call_release(release, userData) }
	}
	st, err := dev.stream(uint64(stream), fn)
	if err != nil {
		return fail(err)
	}
	b, err := st.Import(hipsys.DevicePtr(ptr), uint64(nbytes), rel, opts...)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", fn, err))
	}
	out.id = C.uint64_t(handles.add(kindBuffer, &buffer{dev: dev, b: b}))
	return success()
}

//export cubehip_stream_native_handle
func cubehip_stream_native_handle(h C.cubehip_device, stream C.uint64_t, handle *C.uint64_t) C.cubehip_status {
	if handle == nil {
		return fail(argError("cubehip_stream_native_handle: handle is NULL"))
	}
	*handle = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	n, err := dev.d.On(server.StreamID(stream)).NativeHandle()
	if err != nil {
		return fail(fmt.Errorf("cubehip_stream_native_handle: %w", err))
	}
	*handle = C.uint64_t(n)
	return success()
}
