package main

/*
#include "capi.h"
*/
import "C"

import "fmt"

//export cubehip_buffer_device_pointer
func cubehip_buffer_device_pointer(h C.cubehip_buffer, ptr *C.uint64_t) C.cubehip_status {
	if ptr == nil {
		return fail(argError("cubehip_buffer_device_pointer: ptr is NULL"))
	}
	*ptr = 0
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	p, err := b.b.DevicePointer()
	if err != nil {
		return fail(fmt.Errorf("cubehip_buffer_device_pointer: %w", err))
	}
	*ptr = C.uint64_t(p)
	return success()
}

//export cubehip_buffer_order_before
func cubehip_buffer_order_before(h C.cubehip_buffer, native C.uint64_t) C.cubehip_status {
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	if err := b.b.OrderBefore(uint64(native)); err != nil {
		return fail(fmt.Errorf("cubehip_buffer_order_before: %w", err))
	}
	return success()
}

//export cubehip_stream_wait_native
func cubehip_stream_wait_native(h C.cubehip_device, stream C.uint64_t, native C.uint64_t) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	st, err := dev.stream(uint64(stream), "cubehip_stream_wait_native")
	if err != nil {
		return fail(err)
	}
	if err := st.WaitForeign(uint64(native)); err != nil {
		return fail(fmt.Errorf("cubehip_stream_wait_native: %w", err))
	}
	return success()
}

//export cubehip_device_export_stream
func cubehip_device_export_stream(h C.cubehip_device, native *C.uint64_t) C.cubehip_status {
	if native == nil {
		return fail(argError("cubehip_device_export_stream: native_stream is NULL"))
	}
	*native = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	s, err := dev.d.ExportStream()
	if err != nil {
		return fail(fmt.Errorf("cubehip_device_export_stream: %w", err))
	}
	*native = C.uint64_t(s)
	return success()
}
