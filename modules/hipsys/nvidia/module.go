package nvidia

/*
#include <stdlib.h>
#include <string.h>
#include "cu.h"

// The launch is the hottest call of all (budgeted within 5% of a raw cuLaunchKernel):
// it never calls back into Go, and the argument block is read only during the call
// (cuLaunchKernel copies the parameter values before it returns).
#cgo noescape cu_launch
#cgo nocallback cu_launch

static CUresult cu_module_load(uintptr_t* m, const void* image, size_t n) {
	CUBEHIP_ENSURE();
	// A copy with a NUL after it: PTX is loaded as a C string, and the Go image is not
	// terminated. A CUBIN ignores the extra byte.
	char* c = malloc(n + 1);
	if (!c) return 2; // CUDA_ERROR_OUT_OF_MEMORY
	memcpy(c, image, n);
	c[n] = 0;
	CUmodule h = NULL;
	CUresult r = CUFN(moduleLoadData, CUmodule*, const void*)(&h, c);
	free(c);
	*m = (uintptr_t)h;
	return r;
}
static CUresult cu_module_function(uintptr_t* f, uintptr_t m, const char* name) {
	CUBEHIP_ENSURE();
	CUfunction h = NULL;
	CUresult r = CUFN(moduleGetFunction, CUfunction*, CUmodule, const char*)(&h, (CUmodule)m, name);
	*f = (uintptr_t)h;
	return r;
}
static CUresult cu_module_unload(uintptr_t m) {
	CUBEHIP_ENSURE();
	return CUFN(moduleUnload, CUmodule)((CUmodule)m);
}
static CUresult cu_launch(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
		const uint32_t* offs, int n) {
	CUBEHIP_ENSURE();
	if (n > CUBEHIP_MAX_ARGS) return CUBEHIP_TOO_MANY_ARGS;
	void* params[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) params[i] = (void*)(buf + offs[i]);
	return CUFN(launchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, unsigned, CUstream, void**, void**)((CUfunction)f, gx, gy, gz, bx, by, bz,
		shmem, (CUstream)s, n > 0 ? params : NULL, NULL);
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// module is a loaded CUmodule and the functions taken from it, which die with it.
type module struct {
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
	p.modules.put(uintptr(m), &module{})
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

// FuncGetParams is not answered by this platform yet: hipErrorNotSupported, which the
// layers above take as "cannot check the arguments".
func (p *Platform) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	return nil, hipsys.NewError("nvidia", "hipFuncGetParams", hipsys.ErrorNotSupported, "")
}
