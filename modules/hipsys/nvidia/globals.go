package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// ModuleGetGlobal is cuModuleGetGlobal: the device address and size of a __device__ or
// __constant__ variable of a loaded module, by symbol name. The address is ordinary
// device memory to the copy calls (the driver checks ranges itself). An unknown module
// is hipErrorInvalidHandle, an unknown name hipErrorNotFound (CUDA_ERROR_NOT_FOUND).
func (p *Platform) ModuleGetGlobal(mod hipsys.Module, symbol string) (hipsys.DevicePtr, uint64, error) {
	const call = "hipModuleGetGlobal"
	if _, ok := p.modules.get(uintptr(mod)); !ok {
		return 0, 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("module %#x", uintptr(mod)))
	}
	cname := C.CString(symbol)
	defer C.free(unsafe.Pointer(cname))
	var ptr C.CUdeviceptr
	var size C.size_t
	if r := int32(C.cu_module_global(&ptr, &size, C.uintptr_t(mod), cname)); r != 0 {
		st, code := cuStatus(r)
		if st == hipsys.ErrorInvalidValue {
			// The module is live and the name a C string: the driver says
			// INVALID_VALUE when the name is the module's but not a variable's (a
			// kernel's), where HIP on AMD says NOT_FOUND. One status on every
			// platform: there is no variable of that name.
			st = hipsys.ErrorNotFound
			code += " (a symbol of the module that is not a variable)"
		}
		return 0, 0, hipsys.NewError(platformName, call, st, code+": module variable "+symbol)
	}
	return hipsys.DevicePtr(ptr), uint64(size), nil
}
