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
	return globalSize(k.dev, k.k, n, size)
}

//export cubehip_kernel_global_write
func cubehip_kernel_global_write(h C.cubehip_kernel, stream C.uint64_t, name *C.capi_cchar, src *C.capi_cvoid, size C.uint64_t) C.cubehip_status {
	const call = "cubehip_kernel_global_write"
	k, n, err := kernelGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	return globalWrite(k.dev, k.k, n, uint64(stream), unsafe.Pointer(src), size, call)
}

//export cubehip_kernel_global_read
func cubehip_kernel_global_read(h C.cubehip_kernel, stream C.uint64_t, name *C.capi_cchar, dst unsafe.Pointer, size C.uint64_t) C.cubehip_status {
	const call = "cubehip_kernel_global_read"
	k, n, err := kernelGlobal(h, name, call)
	if err != nil {
		return fail(err)
	}
	return globalRead(k.dev, k.k, n, uint64(stream), dst, size, call)
}

// The module variable calls' bodies, for a kernel's module (cubehip_kernel_global_*) and
// a module's (cubehip_module_global_*): code is either, name checked by the caller.

func globalSize(dev *device, code server.Code, name string, size *C.uint64_t) C.cubehip_status {
	s, err := dev.d.GlobalSize(code, name)
	*size = C.uint64_t(s)
	return result(err)
}

func globalWrite(dev *device, code server.Code, name string, stream uint64, src unsafe.Pointer, size C.uint64_t, call string) C.cubehip_status {
	data, err := hostBytes(src, size, call+": src")
	if err != nil {
		return fail(err)
	}
	if err := dev.caps.refuseWrite(stream, call); err != nil {
		return fail(err)
	}
	return result(dev.d.On(server.StreamID(stream)).WriteGlobal(code, name, data))
}

func globalRead(dev *device, code server.Code, name string, stream uint64, dst unsafe.Pointer, size C.uint64_t, call string) C.cubehip_status {
	data, err := hostBytes(dst, size, call+": dst")
	if err != nil {
		return fail(err)
	}
	st, err := dev.stream(stream, call)
	if err != nil {
		return fail(err)
	}
	return result(st.ReadGlobalInto(data, code, name))
}
