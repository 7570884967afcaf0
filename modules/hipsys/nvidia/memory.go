package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Malloc allocates device memory on the current device; size 0 gives 0, as hipMalloc.
func (p *Platform) Malloc(size uint64) (hipsys.DevicePtr, error) {
	if size == 0 {
		return 0, nil
	}
	var d C.CUdeviceptr
	if err := cuError("hipMalloc", int32(C.cu_mem_alloc(&d, C.size_t(size)))); err != nil {
		return 0, err
	}
	return hipsys.DevicePtr(d), nil
}

// Free frees device memory; an address Malloc did not return is the driver's
// CUDA_ERROR_INVALID_VALUE (the driver checks its own allocation table).
func (p *Platform) Free(ptr hipsys.DevicePtr) error {
	if ptr == 0 {
		return nil
	}
	return cuError("hipFree", int32(C.cu_mem_free(C.CUdeviceptr(ptr))))
}

// HostMalloc allocates pinned host memory (cuMemHostAlloc; HIP's Portable and Mapped
// flags have CUDA's numbers). Size 0 gives 0.
func (p *Platform) HostMalloc(size uint64, flags hipsys.HostMallocFlags) (hipsys.HostPtr, error) {
	if size == 0 {
		return 0, nil
	}
	var h C.uintptr_t
	if err := cuError("hipHostMalloc", int32(C.cu_host_alloc(&h, C.size_t(size), C.uint(flags)))); err != nil {
		return 0, err
	}
	p.hosts.add(uintptr(h), uintptr(size))
	return hipsys.HostPtr(h), nil
}

// HostFree frees pinned memory; an address HostMalloc did not return is
// hipErrorInvalidValue without reaching the driver, which would crash on it.
func (p *Platform) HostFree(ptr hipsys.HostPtr) error {
	if ptr == 0 {
		return nil
	}
	if !p.hosts.remove(uintptr(ptr)) {
		return hipsys.NewError(platformName, "hipHostFree", hipsys.ErrorInvalidValue,
			fmt.Sprintf("%#x is not a pinned allocation", uintptr(ptr)))
	}
	return cuError("hipHostFree", int32(C.cu_host_free(C.uintptr_t(ptr))))
}

// checkStream answers hipErrorInvalidHandle for a stream this platform did not create
// (or has destroyed): the driver would dereference it.
func (p *Platform) checkStream(call string, s hipsys.Stream) error {
	if s == hipsys.NullStream || p.streams.has(uintptr(s)) {
		return nil
	}
	return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("stream %#x", uintptr(s)))
}

// checkHost answers hipErrorInvalidValue for host memory an async copy cannot use.
func (p *Platform) checkHost(call string, h uintptr, n uint64) error {
	if n == 0 || p.hosts.contains(h, uintptr(n)) {
		return nil
	}
	return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue,
		fmt.Sprintf("[%#x, +%d) is not inside a pinned allocation", h, n))
}

// Memset fills size bytes of device memory, synchronously with respect to the host.
func (p *Platform) Memset(dst hipsys.DevicePtr, value byte, size uint64) error {
	if err := hipsys.CheckRange(platformName, "hipMemset", "dst", uintptr(dst), size); err != nil {
		return err
	}
	return cuError("hipMemset", int32(C.cu_memset(C.CUdeviceptr(dst), C.uchar(value), C.size_t(size))))
}

// MemsetAsync queues the fill on stream.
func (p *Platform) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, s hipsys.Stream) error {
	if err := hipsys.CheckRange(platformName, "hipMemsetAsync", "dst", uintptr(dst), size); err != nil {
		return err
	}
	const call = "hipMemsetAsync"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_memset_async(C.CUdeviceptr(dst), C.uchar(value), C.size_t(size), C.uintptr_t(s))))
}

// MemcpyHtoD copies src to device memory and returns when src may be reused.
func (p *Platform) MemcpyHtoD(dst hipsys.DevicePtr, src []byte) error {
	if err := hipsys.CheckRange(platformName, "hipMemcpyHtoD", "dst", uintptr(dst), uint64(len(src))); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	// SAFETY: src is Go memory without pointers; the driver reads it only during the call.
	return cuError("hipMemcpyHtoD", int32(C.cu_memcpy_htod(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)))))
}

// MemcpyDtoH copies device memory into dst, blocking until the bytes are there.
func (p *Platform) MemcpyDtoH(dst []byte, src hipsys.DevicePtr) error {
	if err := hipsys.CheckRange(platformName, "hipMemcpyDtoH", "src", uintptr(src), uint64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	// SAFETY: dst is Go memory without pointers; the driver writes it only during the call.
	return cuError("hipMemcpyDtoH", int32(C.cu_memcpy_dtoh(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst)))))
}

// MemcpyDtoD copies between device allocations, synchronously with respect to the host.
func (p *Platform) MemcpyDtoD(dst, src hipsys.DevicePtr, size uint64) error {
	if err := hipsys.CheckCopy(platformName, "hipMemcpyDtoD", uintptr(dst), uintptr(src), size); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	return cuError("hipMemcpyDtoD", int32(C.cu_memcpy_dtod(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(size))))
}

// MemcpyHtoDAsync queues a copy from pinned memory; src must stay valid until the
// stream passes the copy.
func (p *Platform) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, s hipsys.Stream) error {
	if err := hipsys.CheckCopy(platformName, "hipMemcpyHtoDAsync", uintptr(dst), uintptr(src), size); err != nil {
		return err
	}
	const call = "hipMemcpyHtoDAsync"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if err := p.checkHost(call, uintptr(src), size); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_memcpy_htod_async(C.CUdeviceptr(dst), C.uintptr_t(src), C.size_t(size), C.uintptr_t(s))))
}

// MemcpyDtoHAsync queues a copy into pinned memory; read dst only after the stream
// passes the copy.
func (p *Platform) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	if err := hipsys.CheckCopy(platformName, "hipMemcpyDtoHAsync", uintptr(dst), uintptr(src), size); err != nil {
		return err
	}
	const call = "hipMemcpyDtoHAsync"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if err := p.checkHost(call, uintptr(dst), size); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_memcpy_dtoh_async(C.uintptr_t(dst), C.CUdeviceptr(src), C.size_t(size), C.uintptr_t(s))))
}

var _ hipsys.FlaggingCopier = (*Platform)(nil)

// MemcpyDtoHAsyncFlagged is MemcpyDtoHAsync followed, in the same call, by the write of
// s's completion flag (streamflag.go).
func (p *Platform) MemcpyDtoHAsyncFlagged(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) (uint32, error) {
	if err := hipsys.CheckCopy(platformName, "hipMemcpyDtoHAsync", uintptr(dst), uintptr(src), size); err != nil {
		return 0, err
	}
	const call = "hipMemcpyDtoHAsync"
	if err := p.checkStream(call, s); err != nil {
		return 0, err
	}
	if err := p.checkHost(call, uintptr(dst), size); err != nil {
		return 0, err
	}
	var token C.uint32_t
	r := C.cu_memcpy_dtoh_async_flag(C.uintptr_t(dst), C.CUdeviceptr(src), C.size_t(size), C.uintptr_t(s), p.flagOf(s), &token)
	return uint32(token), cuError(call, int32(r))
}

// MemcpyDtoDAsync queues a device-to-device copy.
func (p *Platform) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	if err := hipsys.CheckCopy(platformName, "hipMemcpyDtoDAsync", uintptr(dst), uintptr(src), size); err != nil {
		return err
	}
	const call = "hipMemcpyDtoDAsync"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_memcpy_dtod_async(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(size), C.uintptr_t(s))))
}

// Memcpy2D is a pitched copy, synchronous with respect to the host.
func (p *Platform) Memcpy2D(c hipsys.Copy2D) error {
	if _, _, err := c.Check(platformName, "hipMemcpy2D"); err != nil {
		return err
	}
	return p.memcpy2D("hipMemcpy2D", c, false, 0)
}

// Memcpy2DAsync queues a pitched copy on stream.
func (p *Platform) Memcpy2DAsync(c hipsys.Copy2D, s hipsys.Stream) error {
	if _, _, err := c.Check(platformName, "hipMemcpy2DAsync"); err != nil {
		return err
	}
	const call = "hipMemcpy2DAsync"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return p.memcpy2D(call, c, true, s)
}

func (p *Platform) memcpy2D(call string, c hipsys.Copy2D, async bool, s hipsys.Stream) error {
	if c.Width == 0 || c.Height == 0 {
		return nil
	}
	if c.Width > c.DstPitch || c.Width > c.SrcPitch {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidPitchValue,
			fmt.Sprintf("width %d exceeds a pitch (dst %d, src %d)", c.Width, c.DstPitch, c.SrcPitch))
	}
	srcHost, dstHost, err := p.copyKinds(call, c)
	if err != nil {
		return err
	}
	memType := func(host bool) C.int {
		if host {
			return C.CU_MEMORYTYPE_HOST
		}
		return C.CU_MEMORYTYPE_DEVICE
	}
	for _, side := range []struct {
		host  bool
		addr  uintptr
		pitch uint64
	}{{srcHost, c.Src, c.SrcPitch}, {dstHost, c.Dst, c.DstPitch}} {
		if side.host {
			if err := p.checkHost(call, side.addr, (c.Height-1)*side.pitch+c.Width); err != nil {
				return err
			}
		}
	}
	a := C.int(0)
	if async {
		a = 1
	}
	return cuError(call, int32(C.cu_memcpy_2d(C.uintptr_t(c.Dst), memType(dstHost), C.size_t(c.DstPitch),
		C.uintptr_t(c.Src), memType(srcHost), C.size_t(c.SrcPitch), C.size_t(c.Width), C.size_t(c.Height), a, C.uintptr_t(s))))
}

// copyKinds says which sides of a copy are host memory. MemcpyDefault infers it the way
// unified addressing does: an address inside a pinned allocation is host memory.
func (p *Platform) copyKinds(call string, c hipsys.Copy2D) (srcHost, dstHost bool, err error) {
	switch c.Kind {
	case hipsys.MemcpyHostToHost:
		return true, true, nil
	case hipsys.MemcpyHostToDevice:
		return true, false, nil
	case hipsys.MemcpyDeviceToHost:
		return false, true, nil
	case hipsys.MemcpyDeviceToDevice:
		return false, false, nil
	case hipsys.MemcpyDefault:
		return p.hosts.contains(c.Src, 1), p.hosts.contains(c.Dst, 1), nil
	}
	return false, false, hipsys.NewError(platformName, call, hipsys.ErrorInvalidMemcpyDirection,
		fmt.Sprintf("kind %d", c.Kind))
}
