package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Dynamic shared memory over 48 KiB. A CUDA kernel may use at most 48 KiB of shared
// memory per block unless it is opted in to more (up to the device's
// sharedMemPerBlockOptin: 227 KiB on an H100 or H200) with the function attribute
// MAX_DYNAMIC_SHARED_SIZE_BYTES; a launch asking for more without it fails with
// CUDA_ERROR_INVALID_VALUE. HIP code written for AMD, where a block may use all of its
// LDS, never sets the attribute, so the platform sets it for the kernel itself, at the
// kernel's first launch that asks for more than the default: to the device's opt-in
// limit less the kernel's static shared memory, all the block may have.

// defaultDynamicShared is what a kernel may use without opting in, on every NVIDIA GPU
// since Volta.
const defaultDynamicShared = 48 << 10

const (
	funcAttrSharedSizeBytes      = 1 // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: the kernel's static shared memory
	funcAttrMaxDynamicSharedSize = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
)

// optIn makes sure fn may launch with shmem bytes of dynamic shared memory, as far as
// the device allows, before the launch reaches the driver (directly or through a launch
// queue). It costs one map lookup for a function already opted in; a request over what
// the device allows is left for the launch to refuse with the driver's status.
func (p *Platform) optIn(call string, fn hipsys.Function, shmem uint32) error {
	if shmem <= defaultDynamicShared {
		return nil
	}
	if v, ok := p.optedIn.Load(uintptr(fn)); ok && shmem <= v.(uint32) {
		return nil
	}
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	m, ok := p.modules.get(uintptr(f.mod))
	if !ok {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x: module unloaded", uintptr(fn)))
	}
	props, err := p.GetDeviceProperties(m.dev)
	if err != nil {
		return err
	}
	var static C.int
	if r := int32(C.cu_func_get_attr(&static, funcAttrSharedSizeBytes, C.uintptr_t(fn))); r != 0 {
		return cuError(call, r)
	}
	limit := int64(props.SharedMemPerBlockOptin) - int64(static)
	if limit <= defaultDynamicShared {
		// An older GPU without more to give: the launch gets the driver's answer.
		p.optedIn.Store(uintptr(fn), uint32(defaultDynamicShared))
		return nil
	}
	if r := int32(C.cu_func_set_attr(C.uintptr_t(fn), funcAttrMaxDynamicSharedSize, C.int(limit))); r != 0 {
		return cuError(call, r)
	}
	p.optedIn.Store(uintptr(fn), uint32(limit))
	return nil
}

// FuncGetAttribute is cuFuncGetAttribute (CUfunction_attribute numbers HIP's attributes
// the same way).
func (p *Platform) FuncGetAttribute(fn hipsys.Function, attr hipsys.FuncAttribute) (int, error) {
	const call = "hipFuncGetAttribute"
	if p.functions.get(uintptr(fn)) == nil {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if !attr.Valid() {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, "unknown attribute "+attr.String())
	}
	var v C.int
	if r := int32(C.cu_func_get_attr(&v, C.int(attr), C.uintptr_t(fn))); r != 0 {
		return 0, cuError(call, r)
	}
	return int(v), nil
}

// FuncSetAttribute is cuFuncSetAttribute, after the range check: MAX_DYNAMIC_SHARED_SIZE_BYTES
// up to the device's opt-in limit less the kernel's static shared memory. A launch asking
// for more than the value set still opts the kernel in to all the device has (optIn), as
// one that never set it does.
func (p *Platform) FuncSetAttribute(fn hipsys.Function, attr hipsys.FuncAttribute, value int) error {
	const call = "hipFuncSetAttribute"
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	limit := uint64(1<<31 - 1)
	if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes {
		m, ok := p.modules.get(uintptr(f.mod))
		if !ok {
			return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x: module unloaded", uintptr(fn)))
		}
		props, err := p.GetDeviceProperties(m.dev)
		if err != nil {
			return err
		}
		var static C.int
		if r := int32(C.cu_func_get_attr(&static, funcAttrSharedSizeBytes, C.uintptr_t(fn))); r != 0 {
			return cuError(call, r)
		}
		limit = uint64(max(int64(max(props.SharedMemPerBlockOptin, props.SharedMemPerBlock))-int64(static), 0))
	}
	if err := hipsys.CheckFuncSetAttribute(platformName, attr, value, limit); err != nil {
		return err
	}
	if r := int32(C.cu_func_set_attr(C.uintptr_t(fn), C.int(attr), C.int(value))); r != 0 {
		return cuError(call, r)
	}
	if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes {
		p.optedIn.Store(uintptr(fn), uint32(max(value, defaultDynamicShared)))
	}
	return nil
}
