package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// module is a loaded CUmodule and the functions taken from it, which die with it.
type module struct {
	dev int // the device whose context holds it
	mu  sync.Mutex
	fns []uintptr
}

// ModuleLoadData loads a CUBIN or PTX image (what RTCGetCode gives) into the current
// device's context. The image is copied; the caller keeps it.
func (p *Platform) ModuleLoadData(image []byte) (hipsys.Module, error) {
	const call = "hipModuleLoadData"
	if len(image) == 0 {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, "empty image")
	}
	if err := checkImage(image); err != nil {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidImage, err.Error())
	}
	var m C.uintptr_t
	// SAFETY: image is Go memory without pointers, copied into C memory during the call.
	if err := cuError(call, int32(C.cu_module_load(&m, unsafe.Pointer(&image[0]), C.size_t(len(image))))); err != nil {
		return 0, err
	}
	p.modules.put(uintptr(m), &module{dev: currentDevice()})
	return hipsys.Module(m), nil
}

// ModuleGetFunction finds an extern "C" kernel by name; a missing one is hipErrorNotFound.
func (p *Platform) ModuleGetFunction(mod hipsys.Module, name string) (hipsys.Function, error) {
	const call = "hipModuleGetFunction"
	m, ok := p.modules.get(uintptr(mod))
	if !ok {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("module %#x", uintptr(mod)))
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.uintptr_t
	if err := cuError(call, int32(C.cu_module_function(&f, C.uintptr_t(mod), cname))); err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.fns = append(m.fns, uintptr(f))
	m.mu.Unlock()
	p.functions.put(uintptr(f), mod)
	return hipsys.Function(f), nil
}

// ModuleUnload unloads the module; its functions become invalid handles at once.
func (p *Platform) ModuleUnload(mod hipsys.Module) error {
	const call = "hipModuleUnload"
	m, ok := p.modules.take(uintptr(mod))
	if !ok {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("module %#x", uintptr(mod)))
	}
	m.mu.Lock()
	for _, f := range m.fns {
		p.functions.take(f)
		p.optedIn.Delete(f)
	}
	m.mu.Unlock()
	return cuError(call, int32(C.cu_module_unload(C.uintptr_t(mod))))
}

// ModuleLaunchKernel queues a launch (cuLaunchKernel). It allocates nothing: the
// argument pointers are built on the C stack from args' packed block.
func (p *Platform) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32,
	s hipsys.Stream, args *hipsys.KernelArgs) error {
	const call = "hipModuleLaunchKernel"
	if !p.functions.has(uintptr(fn)) {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if err := p.optIn(call, fn, sharedMemBytes); err != nil {
		return err
	}
	var (
		buf  *byte
		offs *uint32
		n    int
	)
	if args != nil && args.Len() > 0 {
		n = args.Len()
		if n > C.CUBEHIP_MAX_ARGS {
			return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("%d kernel arguments", n))
		}
		buf, offs = &args.Buffer()[0], &args.Offsets()[0]
	}
	// SAFETY: buf and offs are Go memory without pointers; cuLaunchKernel copies the
	// argument values before it returns.
	r := C.cu_launch(C.uintptr_t(fn), C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
		C.uint(block.X), C.uint(block.Y), C.uint(block.Z), C.uint(sharedMemBytes), C.uintptr_t(s),
		(*C.uint8_t)(unsafe.Pointer(buf)), (*C.uint32_t)(unsafe.Pointer(offs)), C.int(n))
	if r != 0 {
		return cuError(call, int32(r))
	}
	return nil
}

// cudaErrorInvalidValue is CUDA_ERROR_INVALID_VALUE: from cuFuncGetParamInfo, the
// index is past the kernel's last parameter.
const cudaErrorInvalidValue = 1

// maxParams bounds FuncGetParams' walk: a kernel's parameter block holds at most 32 764
// bytes (CUDA 12.1 and later), so no kernel has more parameters than that.
const maxParams = 32764

// FuncGetParams lists fn's parameters with cuFuncGetParamInfo (CUDA 12.4 and later),
// which gives each parameter's offset and size in the parameter block and nothing
// more: Kind is ParamUnknown and Name empty. On an older driver it is
// hipErrorNotSupported, which the layers above take as "cannot check the arguments".
func (p *Platform) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	const call = "hipFuncGetParams"
	if !p.functions.has(uintptr(fn)) {
		return nil, hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if C.cu_has_param_info() == 0 {
		return nil, hipsys.NewError(platformName, call, hipsys.ErrorNotSupported,
			"the driver has no cuFuncGetParamInfo (CUDA 12.4 or newer has it)")
	}
	var params []hipsys.KernelParam
	for i := range maxParams {
		var off, size C.size_t
		r := int32(C.cu_func_param_info(C.uintptr_t(fn), C.size_t(i), &off, &size))
		if r == cudaErrorInvalidValue {
			return params, nil
		}
		if err := cuError(call, r); err != nil {
			return nil, err
		}
		params = append(params, hipsys.KernelParam{Offset: uint32(off), Size: uint32(size), Kind: hipsys.ParamUnknown})
	}
	return nil, hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue,
		fmt.Sprintf("the driver reports more than %d parameters", maxParams))
}
