package main

/*
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/cubehip/cubehip/modules/server"
)

// Module variables: a kernel's __constant__ and __device__ variables, by symbol name.

// kernelGlobal is the kernel of handle h and the variable name the host passed, checked
// and copied.
func kernelGlobal(h C.cubehip_kernel, name *C.capi_cchar, call string) (*kernel, string, error) {
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return nil, "", err
	}
	if name == nil {
		return nil, "", argError(call + ": name is NULL")
	}
	n := C.GoString(name)
	if n == "" {
		return nil, "", argError(call + ": name is empty")
	}
	return k, n, nil
}

//export cubehip_kernel_global_size
func cubehip_kernel_global_size(h C.cubehip_kernel, name *C.capi_cchar, size *C.uint64_t) C.cubehip_status {
	const call = "cubehip_kernel_global_size"
	if size == nil {
		return fail(argError(call + ": size is NULL"))
	}
	*size = 0
	k, n, err := kernelGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	s, err := k.dev.d.GlobalSize(k.k, n)
	*size = C.uint64_t(s)
	return result(err)
}

//export cubehip_kernel_global_write
func cubehip_kernel_global_write(h C.cubehip_kernel, stream C.uint64_t, name *C.capi_cchar, src *C.capi_cvoid, size C.uint64_t) C.cubehip_status {
	const call = "cubehip_kernel_global_write"
	k, n, err := kernelGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	data, err := hostBytes(unsafe.Pointer(src), size, call+": src")
	if err != nil {
		return fail(err)
	}
	if err := k.dev.caps.refuseWrite(uint64(stream), "cubehip_kernel_global_write"); err != nil {
		return fail(err)
	}
	return result(k.dev.d.On(server.StreamID(stream)).WriteGlobal(k.k, n, data))
}

//export cubehip_kernel_global_read
func cubehip_kernel_global_read(h C.cubehip_kernel, stream C.uint64_t, name *C.capi_cchar, dst unsafe.Pointer, size C.uint64_t) C.cubehip_status {
	const call = "cubehip_kernel_global_read"
	k, n, err := kernelGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	data, err := hostBytes(dst, size, call+": dst")
	if err != nil {
		return fail(err)
	}
	st, err := k.dev.stream(uint64(stream), "cubehip_kernel_global_read")
	if err != nil {
		return fail(err)
	}
	return result(st.ReadGlobalInto(data, k.k, n))
}
