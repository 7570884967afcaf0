package amd

// #include "trampolines.h"
import "C"

import (
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Malloc is hipMalloc. The allocation is recorded so that copies and frees can be
// checked against it; size 0 gives 0 and no error, as hipMalloc does.
func (p *Platform) Malloc(size uint64) (hipsys.DevicePtr, error) {
	if size == 0 {
		return 0, nil
	}
	var ptr C.uintptr_t
	if err := check("hipMalloc", C.amdt_alloc(p.lib.s.malloc, &ptr, C.size_t(size))); err != nil {
		return 0, err
	}
	p.device.add(uintptr(ptr), size)
	return hipsys.DevicePtr(ptr), nil
}

// Free is hipFree (which waits for the device, as in HIP). Free(0) is a no-op; an address
// that is not the start of a live allocation is hipErrorInvalidValue and reaches no HIP call.
func (p *Platform) Free(ptr hipsys.DevicePtr) error {
	if ptr == 0 {
		return nil
	}
	if !p.device.remove(uintptr(ptr)) {
		return invalid("hipFree", hipsys.ErrorInvalidValue, "not the start of a live hipMalloc allocation")
	}
	return check("hipFree", C.amdt_h(p.lib.s.free, C.uintptr_t(ptr)))
}

// HostMalloc is hipHostMalloc: pinned host memory, valid until HostFree.
func (p *Platform) HostMalloc(size uint64, flags hipsys.HostMallocFlags) (hipsys.HostPtr, error) {
	if size == 0 {
		return 0, nil
	}
	var ptr C.uintptr_t
	if err := check("hipHostMalloc", C.amdt_hostalloc(p.lib.s.hostMalloc, &ptr, C.size_t(size), C.unsigned(flags))); err != nil {
		return 0, err
	}
	p.host.add(uintptr(ptr), size)
	return hipsys.HostPtr(ptr), nil
}

// HostFree is hipHostFree.
func (p *Platform) HostFree(ptr hipsys.HostPtr) error {
	if ptr == 0 {
		return nil
	}
	if !p.host.remove(uintptr(ptr)) {
		return invalid("hipHostFree", hipsys.ErrorInvalidValue, "not the start of a live hipHostMalloc allocation")
	}
	return check("hipHostFree", C.amdt_h(p.lib.s.hostFree, C.uintptr_t(ptr)))
}

// inDevice checks a device range for call; ranges of 0 bytes need no memory behind them.
func (p *Platform) inDevice(call string, ptr hipsys.DevicePtr, n uint64) error {
	if n == 0 {
		return nil
	}
	if err := p.device.check(uintptr(ptr), n); err != nil {
		return invalid(call, hipsys.ErrorInvalidValue, err.Error())
	}
	return nil
}

func (p *Platform) inHost(call string, ptr hipsys.HostPtr, n uint64) error {
	if n == 0 {
		return nil
	}
	if err := p.host.check(uintptr(ptr), n); err != nil {
		return invalid(call, hipsys.ErrorInvalidValue, err.Error())
	}
	return nil
}

// Memset is hipMemsetD8; it returns once the memory is set.
func (p *Platform) Memset(dst hipsys.DevicePtr, value byte, size uint64) error {
	if err := p.inDevice("hipMemsetD8", dst, size); err != nil || size == 0 {
		return err
	}
	return check("hipMemsetD8", C.amdt_memset(p.lib.s.memsetD8, C.uintptr_t(dst), C.uchar(value), C.size_t(size)))
}

// MemsetAsync is hipMemsetD8Async on stream.
func (p *Platform) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, stream hipsys.Stream) error {
	const call = "hipMemsetD8Async"
	if err := p.stream(call, stream); err != nil {
		return err
	}
	if err := p.inDevice(call, dst, size); err != nil || size == 0 {
		return err
	}
	return check(call, C.amdt_memset_async(p.lib.s.memsetD8Async, C.uintptr_t(dst), C.uchar(value), C.size_t(size), C.uintptr_t(stream)))
}

// MemcpyHtoD is hipMemcpyHtoD from Go memory; it returns once src may be reused.
func (p *Platform) MemcpyHtoD(dst hipsys.DevicePtr, src []byte) error {
	n := uint64(len(src))
	if err := p.inDevice("hipMemcpyHtoD", dst, n); err != nil || n == 0 {
		return err
	}
	// SAFETY: src is Go memory lent for the call; hipMemcpyHtoD is synchronous for pageable
	// memory and keeps no pointer to it. dst is a checked device address, not a Go pointer.
	return check("hipMemcpyHtoD", C.amdt_memcpy(p.lib.s.memcpyHtoD, devPtr(dst), unsafe.Pointer(&src[0]), C.size_t(n)))
}

// MemcpyDtoH is hipMemcpyDtoH into Go memory; the bytes are in dst when it returns.
func (p *Platform) MemcpyDtoH(dst []byte, src hipsys.DevicePtr) error {
	n := uint64(len(dst))
	if err := p.inDevice("hipMemcpyDtoH", src, n); err != nil || n == 0 {
		return err
	}
	// SAFETY: dst is Go memory lent for the call; hipMemcpyDtoH completes before returning.
	return check("hipMemcpyDtoH", C.amdt_memcpy(p.lib.s.memcpyDtoH, unsafe.Pointer(&dst[0]), devPtr(src), C.size_t(n)))
}

// MemcpyDtoD is hipMemcpyDtoD.
func (p *Platform) MemcpyDtoD(dst, src hipsys.DevicePtr, size uint64) error {
	const call = "hipMemcpyDtoD"
	if err := p.inDevice(call, dst, size); err != nil || size == 0 {
		return err
	}
	if err := p.inDevice(call, src, size); err != nil {
		return err
	}
	return check(call, C.amdt_memcpy(p.lib.s.memcpyDtoD, devPtr(dst), devPtr(src), C.size_t(size)))
}

// MemcpyHtoDAsync is hipMemcpyHtoDAsync from pinned memory; src must stay untouched until
// the stream reaches the copy.
func (p *Platform) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, stream hipsys.Stream) error {
	const call = "hipMemcpyHtoDAsync"
	if err := p.asyncCopy(call, stream, uintptr(dst), uintptr(src), size, p.device, p.host); err != nil || size == 0 {
		return err
	}
	return check(call, C.amdt_memcpy_async(p.lib.s.memcpyHtoDAsync, C.uintptr_t(dst), C.uintptr_t(src), C.size_t(size), C.uintptr_t(stream)))
}

// MemcpyDtoHAsync is hipMemcpyDtoHAsync into pinned memory, complete when the stream is.
func (p *Platform) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, stream hipsys.Stream) error {
	const call = "hipMemcpyDtoHAsync"
	if err := p.asyncCopy(call, stream, uintptr(dst), uintptr(src), size, p.host, p.device); err != nil || size == 0 {
		return err
	}
	return check(call, C.amdt_memcpy_async(p.lib.s.memcpyDtoHAsync, C.uintptr_t(dst), C.uintptr_t(src), C.size_t(size), C.uintptr_t(stream)))
}

// MemcpyDtoDAsync is hipMemcpyDtoDAsync.
func (p *Platform) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, stream hipsys.Stream) error {
	const call = "hipMemcpyDtoDAsync"
	if err := p.asyncCopy(call, stream, uintptr(dst), uintptr(src), size, p.device, p.device); err != nil || size == 0 {
		return err
	}
	return check(call, C.amdt_memcpy_async(p.lib.s.memcpyDtoDAsync, C.uintptr_t(dst), C.uintptr_t(src), C.size_t(size), C.uintptr_t(stream)))
}

func (p *Platform) asyncCopy(call string, stream hipsys.Stream, dst, src uintptr, n uint64, dk, sk *allocs) error {
	if err := p.stream(call, stream); err != nil || n == 0 {
		return err
	}
	if err := dk.check(dst, n); err != nil {
		return invalid(call, hipsys.ErrorInvalidValue, "dst: "+err.Error())
	}
	if err := sk.check(src, n); err != nil {
		return invalid(call, hipsys.ErrorInvalidValue, "src: "+err.Error())
	}
	return nil
}

// devPtr hands a device address to C as the void* HIP's prototype takes.
func devPtr(p hipsys.DevicePtr) unsafe.Pointer {
	// SAFETY: p is a device address HIP gave out, never Go memory; C receives it as the
	// opaque void* hipMemcpy* expects and Go never dereferences it.
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
