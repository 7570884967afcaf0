package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// kernelFunc is a function ModuleGetFunction handed out: its module, its name and its
// parameters, read once, when it is handed out, because every launch compares its
// arguments with them. cuLaunchKernel reads one argument pointer per parameter of the
// kernel and has no way to know how many it was given: a list one short has it read a
// pointer past the list and dereference it, which crashes the process. The handle's
// check finds the function (the table's memo, below), so the comparison adds a loop
// over the sizes, a few ns against a launch's µs (docs/benchmarks.md, "The nvidia
// platform's argument check").
type kernelFunc struct {
	handle uintptr
	mod    hipsys.Module
	name   string
	params []hipsys.KernelParam // the driver's answer (cuFuncGetParamInfo)
	// paramsErr is why the driver could not say (nil when params is its answer): a
	// driver older than CUDA 12.4 has no call that tells a function's parameters.
	paramsErr error
	// sizes is what a launch's arguments are compared with: params' sizes, or, where
	// the driver could not say, those the module's image declares (imageParamSizes).
	// checked is false when neither told them (a fatbinary on an older driver): then
	// what a launch checks is what it always did, the handles and at most
	// CUBEHIP_MAX_ARGS arguments.
	sizes   []uint32
	checked bool
}

// argsMatch reports whether args match the function's parameters, where they are
// known; argsError is then the error of those that do not (hipsys.CheckArgs). A launch
// tests argsMatch, which the compiler inlines: a matching launch pays a loop over the
// sizes and no call.
func (f *kernelFunc) argsMatch(args *hipsys.KernelArgs) bool {
	return !f.checked || args.SizesMatch(f.sizes)
}

func (f *kernelFunc) argsError(args *hipsys.KernelArgs) error {
	return hipsys.CheckArgs(platformName, f.name, f.sizes, args)
}

// newKernelFunc asks the driver for fn's parameters; where it cannot say, the sizes
// come from image, the module's imageParamSizes (nil when the driver has the query).
func newKernelFunc(fn uintptr, mod hipsys.Module, name string, image map[string][]uint32) *kernelFunc {
	f := &kernelFunc{handle: fn, mod: mod, name: name}
	f.params, f.paramsErr = queryParams(fn)
	if f.paramsErr == nil {
		f.sizes, f.checked = hipsys.ParamSizes(f.params), true
	} else {
		f.sizes, f.checked = image[name]
	}
	return f
}

// cudaErrorInvalidValue is CUDA_ERROR_INVALID_VALUE: from cuFuncGetParamInfo, the
// index is past the kernel's last parameter.
const cudaErrorInvalidValue = 1

// maxParams bounds the walk over a kernel's parameters: a kernel's parameter block
// holds at most 32 764 bytes (CUDA 12.1 and later), so no kernel has more parameters
// than that.
const maxParams = 32764

// queryParams lists fn's parameters with cuFuncGetParamInfo (CUDA 12.4 and later),
// which gives each parameter's offset and size and nothing more: Kind is ParamUnknown
// and Name empty. On an older driver it is hipErrorNotSupported.
func queryParams(fn uintptr) ([]hipsys.KernelParam, error) {
	const call = "hipFuncGetParams"
	if C.cu_has_param_info() == 0 {
		return nil, hipsys.NewError(platformName, call, hipsys.ErrorNotSupported,
			"the driver has no cuFuncGetParamInfo (CUDA 12.4 or newer has it)")
	}
	params := []hipsys.KernelParam{}
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

// funcTable is the live functions, checked on every launch: hotHandles (handles.go) with
// the function itself in the memo, since a launch needs its parameters, not only its
// liveness. The memo is a pointer to a kernelFunc made once per ModuleGetFunction, so
// storing it allocates nothing whichever kernels alternate.
type funcTable struct {
	mu sync.Mutex // serializes writers
	s  atomic.Pointer[funcSnapshot]
}

type funcSnapshot struct {
	m    map[uintptr]*kernelFunc
	last atomic.Pointer[kernelFunc] // the function get last found in this snapshot
}

// get is the live function fn, or nil. The memo's test is inlined into each launch;
// find, the map, is the call of a launch of another kernel than the last.
func (t *funcTable) get(fn uintptr) *kernelFunc {
	s := t.s.Load()
	if s == nil {
		return nil
	}
	if f := s.last.Load(); f != nil && f.handle == fn {
		return f
	}
	return s.find(fn)
}

func (s *funcSnapshot) find(fn uintptr) *kernelFunc {
	f := s.m[fn]
	if f != nil {
		s.last.Store(f)
	}
	return f
}

func (t *funcTable) put(f *kernelFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := t.clone(1)
	next[f.handle] = f
	t.s.Store(&funcSnapshot{m: next})
}

// take removes fn and reports whether it was live. The snapshot it replaces keeps its
// memo, but no lookup reads that snapshot again, so a taken function is never found.
func (t *funcTable) take(fn uintptr) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.s.Load()
	if s == nil {
		return false
	}
	if _, ok := s.m[fn]; !ok {
		return false
	}
	next := t.clone(0)
	delete(next, fn)
	t.s.Store(&funcSnapshot{m: next})
	return true
}

func (t *funcTable) clone(extra int) map[uintptr]*kernelFunc {
	old := t.s.Load()
	if old == nil {
		return make(map[uintptr]*kernelFunc, extra)
	}
	next := make(map[uintptr]*kernelFunc, len(old.m)+extra)
	for k, v := range old.m {
		next[k] = v
	}
	return next
}
