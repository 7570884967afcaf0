package amd

// #include <stdlib.h>
// #include "trampolines.h"
import "C"

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// ModuleLoadData is hipModuleLoadData of a code object from RTCGetCode or CompileFor: an
// AMDGPU ELF or a clang offload bundle holding one. The image is copied to C memory that
// lives until ModuleUnload, because ROCm may read the image after the call returns (lazy
// code-object loading) and Go memory may not be held by C that long. Anything that is not
// an AMDGPU code object is hipErrorInvalidImage before it reaches ROCm's loader.
func (p *Platform) ModuleLoadData(image []byte) (hipsys.Module, error) {
	const call = "hipModuleLoadData"
	if why := imageProblem(image); why != "" {
		return 0, invalid(call, hipsys.ErrorInvalidImage, why)
	}
	img := C.CBytes(image)
	var m C.uintptr_t
	// SAFETY: img is C memory owned by the module from here on; it is freed by
	// ModuleUnload, or below when the load fails.
	if err := check(call, C.amdt_module_load(p.lib.s.moduleLoadData, &m, img)); err != nil {
		C.free(img)
		return 0, err
	}
	p.modules.add(uintptr(m), uintptr(img))
	arch := ""
	if bytes.HasPrefix(image, []byte(bundleMagic)) {
		arch, _ = p.currentArch() // the bundle's entry ROCm loaded is the device's
	}
	p.params.load(uintptr(m), image, arch)
	return hipsys.Module(m), nil
}

// imageProblem is "" for something that looks like an AMDGPU code object, else why not.
func imageProblem(image []byte) string {
	switch {
	case len(image) == 0:
		return "empty image"
	case bytes.HasPrefix(image, []byte(bundleMagic)), bytes.HasPrefix(image, []byte(compressedBundleMagic)):
		return ""
	case !bytes.HasPrefix(image, []byte("\x7fELF")) || len(image) < 64:
		return "not an ELF code object or offload bundle"
	case binary.LittleEndian.Uint16(image[18:]) != emAMDGPU:
		return "ELF for another machine (e_machine " + strconv.Itoa(int(binary.LittleEndian.Uint16(image[18:]))) + "), not AMDGPU (224)"
	}
	return ""
}

// ModuleGetFunction is hipModuleGetFunction. The function lives as long as its module.
func (p *Platform) ModuleGetFunction(m hipsys.Module, entry string) (hipsys.Function, error) {
	const call = "hipModuleGetFunction"
	if !p.modules.has(uintptr(m)) {
		return 0, badHandle(call, "module")
	}
	cname := C.CString(entry)
	defer C.free(unsafe.Pointer(cname))
	var f C.uintptr_t
	if err := check(call, C.amdt_get_function(p.lib.s.moduleGetFunction, &f, C.uintptr_t(m), cname)); err != nil {
		return 0, err
	}
	p.functions.add(uintptr(f), uintptr(m))
	p.params.function(uintptr(f), uintptr(m), entry)
	return hipsys.Function(f), nil
}

// ModuleLaunchKernel is hipModuleLaunchKernel; it returns once the launch is queued on
// stream, and args may be reused at once (HIP copies the arguments when it enqueues).
// Arguments whose number or sizes differ from the kernel's parameters in its code
// object's metadata are hipErrorInvalidValue (hipsys.CheckArgs), and nothing is
// launched. It crosses into C once and allocates nothing.
func (p *Platform) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32,
	stream hipsys.Stream, args *hipsys.KernelArgs) error {
	const call = "hipModuleLaunchKernel"
	// The parameter table has every live function (ModuleGetFunction adds it, ModuleUnload
	// drops it first): one lookup checks the handle and the arguments.
	live, err := p.params.checkLaunch(uintptr(fn), args)
	if !live {
		return badHandle(call, "function")
	}
	if err != nil {
		return err
	}
	if err = p.stream(call, stream); err != nil {
		return err
	}
	var buf *C.uchar
	var offs *C.uint32_t
	n := 0
	if args != nil && args.Len() > 0 {
		b, o := args.Buffer(), args.Offsets()
		// SAFETY: the argument block and offsets are Go memory lent for the call; the
		// trampoline builds kernelParams from them and HIP copies the values at enqueue.
		buf, offs, n = (*C.uchar)(unsafe.Pointer(&b[0])), (*C.uint32_t)(unsafe.Pointer(&o[0])), len(o)
	}
	return check(call, C.amdt_launch(p.lib.s.moduleLaunchKernel, C.uintptr_t(fn),
		C.unsigned(grid.X), C.unsigned(grid.Y), C.unsigned(grid.Z),
		C.unsigned(block.X), C.unsigned(block.Y), C.unsigned(block.Z),
		C.unsigned(sharedMemBytes), C.uintptr_t(stream), buf, offs, C.int(n)))
}

// ModuleLaunchCooperativeKernel is hipModuleLaunchCooperativeKernel, checked as
// ModuleLaunchKernel is. HIP refuses a grid over what the device holds at once with
// hipErrorCooperativeLaunchTooLarge. A libamdhip64 without the call (ROCm 5.2 has none) is
// hipErrorNotSupported, naming its version, and nothing is launched.
func (p *Platform) ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32,
	stream hipsys.Stream, args *hipsys.KernelArgs) error {
	const call = "hipModuleLaunchCooperativeKernel"
	live, err := p.params.checkLaunch(uintptr(fn), args)
	if !live {
		return badHandle(call, "function")
	}
	if err != nil {
		var he *hipsys.Error
		if errors.As(err, &he) {
			c := *he
			c.Call = call
			return &c
		}
		return err
	}
	if err = p.stream(call, stream); err != nil {
		return err
	}
	if p.lib.s.moduleLaunchCooperative == nil {
		return invalid(call, hipsys.ErrorNotSupported, "libamdhip64 "+versionString(p.lib.version)+" has no "+call+" (a later ROCm has it)")
	}
	var buf *C.uchar
	var offs *C.uint32_t
	n := 0
	if args != nil && args.Len() > 0 {
		b, o := args.Buffer(), args.Offsets()
		// SAFETY: as ModuleLaunchKernel's: lent for the call, copied by HIP at enqueue.
		buf, offs, n = (*C.uchar)(unsafe.Pointer(&b[0])), (*C.uint32_t)(unsafe.Pointer(&o[0])), len(o)
	}
	return check(call, C.amdt_launch_coop(p.lib.s.moduleLaunchCooperative, C.uintptr_t(fn),
		C.unsigned(grid.X), C.unsigned(grid.Y), C.unsigned(grid.Z),
		C.unsigned(block.X), C.unsigned(block.Y), C.unsigned(block.Z),
		C.unsigned(sharedMemBytes), C.uintptr_t(stream), buf, offs, C.int(n)))
}

// ModuleOccupancyMaxActiveBlocksPerMultiprocessor is
// hipModuleOccupancyMaxActiveBlocksPerMultiprocessor: blocks of fn per compute unit.
func (p *Platform) ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn hipsys.Function, blockSize int, dynSharedMem uint64) (int, error) {
	const call = "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"
	if !p.functions.has(uintptr(fn)) {
		return 0, badHandle(call, "function")
	}
	if blockSize < 0 || blockSize > math.MaxInt32 {
		return 0, invalid(call, hipsys.ErrorInvalidValue, "block size "+strconv.Itoa(blockSize))
	}
	var n C.int
	if err := check(call, C.amdt_occupancy(p.lib.s.moduleOccupancy, &n, C.uintptr_t(fn), C.int(blockSize), C.size_t(dynSharedMem))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// ModuleUnload is hipModuleUnload; the module's functions are retired with it.
func (p *Platform) ModuleUnload(m hipsys.Module) error {
	img, ok := p.modules.take(uintptr(m))
	if !ok {
		return badHandle("hipModuleUnload", "module")
	}
	p.params.unload(uintptr(m)) // first: a launch finds its function here
	p.functions.removeOwned(uintptr(m))
	p.dropFuncAttrs()
	p.vars.unload(uintptr(m))
	if err := check("hipModuleUnload", C.amdt_h(p.lib.s.moduleUnload, C.uintptr_t(m))); err != nil {
		return err // the image is leaked rather than freed under a module ROCm may still hold
	}
	// SAFETY: img is the C copy made by ModuleLoadData; the unloaded module no longer reads it.
	C.free(*(*unsafe.Pointer)(unsafe.Pointer(&img)))
	return nil
}

// FuncGetParams lists fn's parameters as the compiler laid them out, read from the
// metadata of its module's code object when the module was loaded (ROCm has no call
// for it): offset, size, kind (global_buffer is a pointer, by_value a value) and the
// name where the compiler kept one (hiprtc does not), without the hidden arguments the
// compiler appends for the runtime. A function this platform did not hand out is
// hipErrorInvalidHandle; one whose code object has no readable metadata (code object
// version 2, a compressed offload bundle) is hipErrorNotSupported, saying why.
func (p *Platform) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	const call = "hipFuncGetParams"
	if !p.functions.has(uintptr(fn)) {
		return nil, badHandle(call, "function")
	}
	params, ok, err := p.params.params(uintptr(fn))
	if !ok {
		return nil, invalid(call, hipsys.ErrorNotSupported, "no metadata was read for this function")
	}
	if err != nil {
		return nil, &hipsys.Error{Platform: name, Call: call, Status: hipsys.ErrorNotSupported, Detail: err.Error(), Cause: err}
	}
	return params, nil
}
