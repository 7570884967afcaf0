package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// ImportMemory checks with cuPointerGetAttribute that [ptr, ptr+size) is device memory
// (cuMemAlloc'ed or managed: CuPy's and PyTorch's allocators) of the current device and
// lies inside one allocation; the driver then accepts it in every call, and only a
// count of the import is kept (ReleaseImportedMemory). Host memory (pinned or not) and a pointer the driver does not know are
// hipErrorInvalidValue, another device's memory hipErrorInvalidDevice.
func (p *Platform) ImportMemory(ptr hipsys.DevicePtr, size uint64) error {
	const call = "hipImportMemory"
	if ptr == 0 {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, "ptr is null")
	}
	if size == 0 {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, "size is 0")
	}
	if err := hipsys.CheckRange(platformName, call, "ptr", uintptr(ptr), size); err != nil {
		return err
	}
	var (
		kind    C.unsigned
		ordinal C.int
		start   C.CUdeviceptr
		n       C.size_t
	)
	if r := int32(C.cu_pointer_info(C.CUdeviceptr(ptr), &kind, &ordinal, &start, &n)); r != 0 {
		// CUDA_ERROR_INVALID_VALUE: an address no CUDA allocation of this process holds.
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue,
			fmt.Sprintf("%#x is not memory the CUDA driver allocated (host memory, or another platform's): cuPointerGetAttribute returned %d", uint64(ptr), r))
	}
	if kind != C.CU_MEMORYTYPE_DEVICE {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("%#x is host memory, not device memory", uint64(ptr)))
	}
	if cur := int(C.cu_get_dev()); int(ordinal) != cur {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidDevice,
			fmt.Sprintf("%#x is memory of device %d, not of the current device %d", uint64(ptr), int(ordinal), cur))
	}
	if off := uint64(ptr) - uint64(start); off > uint64(n) || size > uint64(n)-off {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue,
			fmt.Sprintf("[%#x, +%d) runs past the end of its allocation [%#x, +%d)", uint64(ptr), size, uint64(start), uint64(n)))
	}
	p.importsMu.Lock()
	defer p.importsMu.Unlock()
	if p.imports == nil {
		p.imports = map[[2]uint64]int{}
	}
	p.imports[[2]uint64{uint64(ptr), size}]++
	return nil
}

// ReleaseImportedMemory ends one ImportMemory of exactly [ptr, ptr+size). The driver
// holds nothing for an import; the count is kept so that every platform refuses a range
// that was not imported alike.
func (p *Platform) ReleaseImportedMemory(ptr hipsys.DevicePtr, size uint64) error {
	p.importsMu.Lock()
	defer p.importsMu.Unlock()
	k := [2]uint64{uint64(ptr), size}
	if p.imports[k] == 0 {
		return hipsys.NewError(platformName, "hipReleaseImportedMemory", hipsys.ErrorInvalidValue,
			fmt.Sprintf("[%#x, +%d) was not imported", uint64(ptr), size))
	}
	if p.imports[k]--; p.imports[k] == 0 {
		delete(p.imports, k)
	}
	return nil
}
