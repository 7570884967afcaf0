package main

// #include "capi.h"
import "C"

import "github.com/cubehip/cubehip/modules/hipsys"

//export cubehip_kernel_get_attribute
func cubehip_kernel_get_attribute(h C.cubehip_kernel, attr C.cubehip_func_attribute, out *C.int) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_kernel_get_attribute: value is NULL"))
	}
	*out = 0
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return fail(err)
	}
	v, err := k.dev.d.FuncAttribute(k.k, hipsys.FuncAttribute(attr))
	k.noteCompile(err)
	if err != nil {
		return fail(err)
	}
	*out = C.int(v)
	return success()
}

//export cubehip_kernel_set_attribute
func cubehip_kernel_set_attribute(h C.cubehip_kernel, attr C.cubehip_func_attribute, value C.int) C.cubehip_status {
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return fail(err)
	}
	err = k.dev.d.SetFuncAttribute(k.k, hipsys.FuncAttribute(attr), int(value))
	k.noteCompile(err)
	if err != nil {
		return fail(err)
	}
	return success()
}
