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
