package nvidia

// #include "trampolines.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// module is a loaded CUmodule and the functions taken from it, which die with it.
type module struct {
	dev int // the device whose context holds it
	// params is each kernel's parameter sizes as the image declares them, read only when
	// the driver has no cuFuncGetParamInfo to tell them (kernelFunc).
	params map[string][]uint32
	mu     sync.Mutex
	fns    []uintptr
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
	mod := &module{dev: currentDevice()}
	if C.cu_has_param_info() == 0 {
		mod.params = imageParamSizes(image)
	}
	p.modules.put(uintptr(m), mod)
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
	kf := newKernelFunc(uintptr(f), mod, name, m.params)
	m.mu.Lock()
	m.fns = append(m.fns, uintptr(f))
	m.mu.Unlock()
	p.functions.put(kf)
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

// ModuleLaunchKernel queues a launch (cuLaunchKernel). Arguments whose number or sizes
// differ from the kernel's parameters, as the driver gave them when ModuleGetFunction
// handed the function out, are hipErrorInvalidValue and nothing is launched
// (kernelFunc says what a driver older than CUDA 12.4 gets instead). It allocates
// nothing: the argument pointers are built on the C stack from args' packed block.
func (p *Platform) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32,
	s hipsys.Stream, args *hipsys.KernelArgs) error {
	const call = "hipModuleLaunchKernel"
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if !f.argsMatch(args) {
		return f.argsError(args)
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

// ModuleLaunchCooperativeKernel is cuLaunchCooperativeKernel, checked and opted in to
// shared memory as ModuleLaunchKernel is; the driver refuses a grid over what the device
// holds at once (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, hipErrorCooperativeLaunchTooLarge)
// and a device without cooperative launch (CUDA_ERROR_NOT_SUPPORTED). It is issued on the
// calling thread after the launches queued before it, never through the launch queue.
func (p *Platform) ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32,
	s hipsys.Stream, args *hipsys.KernelArgs) error {
	const call = "hipModuleLaunchCooperativeKernel"
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if !f.argsMatch(args) {
		return renameCall(f.argsError(args), call)
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
	// SAFETY: as ModuleLaunchKernel's: the driver copies the argument values before it returns.
	r := C.cu_launch_coop(C.uintptr_t(fn), C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
		C.uint(block.X), C.uint(block.Y), C.uint(block.Z), C.uint(sharedMemBytes), C.uintptr_t(s),
		(*C.uint8_t)(unsafe.Pointer(buf)), (*C.uint32_t)(unsafe.Pointer(offs)), C.int(n))
	if r != 0 {
		return cuError(call, int32(r))
	}
	return nil
}

// ModuleOccupancyMaxActiveBlocksPerMultiprocessor is
// cuOccupancyMaxActiveBlocksPerMultiprocessor: blocks of fn per SM.
func (p *Platform) ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn hipsys.Function, blockSize int, dynSharedMem uint64) (int, error) {
	const call = "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"
	if p.functions.get(uintptr(fn)) == nil {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if blockSize < 0 || blockSize > math.MaxInt32 {
		return 0, hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("block size %d", blockSize))
	}
	var n C.int
	if r := C.cu_occupancy(&n, C.uintptr_t(fn), C.int(blockSize), C.size_t(dynSharedMem)); r != 0 {
		return 0, cuError(call, int32(r))
	}
	return int(n), nil
}

// renameCall is err as the call named call reports it (a check shared with another call).
func renameCall(err error, call string) error {
	var he *hipsys.Error
	if !errors.As(err, &he) {
		return err
	}
	c := *he
	c.Call = call
	return &c
}

// FuncGetParams lists fn's parameters as cuFuncGetParamInfo (CUDA 12.4 and later) gave
// them when ModuleGetFunction handed fn out: each parameter's offset and size in the
// parameter block and nothing more (Kind ParamUnknown, Name empty). On an older driver
// it is hipErrorNotSupported, which the layers above take as "cannot check the
// arguments".
func (p *Platform) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return nil, hipsys.NewError(platformName, "hipFuncGetParams", hipsys.ErrorInvalidHandle, fmt.Sprintf("function %#x", uintptr(fn)))
	}
	if f.paramsErr != nil {
		return nil, f.paramsErr
	}
	return append([]hipsys.KernelParam{}, f.params...), nil
}
