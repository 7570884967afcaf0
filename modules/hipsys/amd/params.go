package amd

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// paramTables keeps what FuncGetParams answers and every launch is checked against:
// each loaded module's kernel parameters, read from its code object's metadata when it
// is loaded (ROCm has no query for them), and each function's, looked up when
// ModuleGetFunction hands the function out. A module whose metadata could not be read
// keeps the reason, which FuncGetParams reports.
type paramTables struct {
	mu      sync.RWMutex
	modules map[uintptr]moduleParams
	funcs   map[uintptr]funcParams
}

type moduleParams struct {
	kernels map[string][]hipsys.KernelParam
	err     error // why the metadata could not be read (kernels is nil then)
}

type funcParams struct {
	module uintptr
	entry  string // the kernel's name, for a launch's errors
	params []hipsys.KernelParam
	sizes  []uint32 // params' sizes: what a launch's arguments are compared with
	err    error
}

func newParamTables() *paramTables {
	return &paramTables{modules: map[uintptr]moduleParams{}, funcs: map[uintptr]funcParams{}}
}

// load reads a just-loaded module's metadata. arch picks the entry of an offload bundle.
func (t *paramTables) load(m uintptr, image []byte, arch string) {
	kernels, err := KernelParams(image, arch)
	t.mu.Lock()
	t.modules[m] = moduleParams{kernels: kernels, err: err}
	t.mu.Unlock()
}

// function records the parameters of the function fn, the entry named entry of module m.
func (t *paramTables) function(fn, m uintptr, entry string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	mp := t.modules[m]
	f := funcParams{module: m, entry: entry, err: mp.err}
	if mp.err == nil {
		var ok bool
		if f.params, ok = mp.kernels[entry]; !ok {
			f.err = errNoKernelMetadata(entry)
		}
		f.sizes = hipsys.ParamSizes(f.params)
	}
	t.funcs[fn] = f
}

type errNoKernelMetadata string

func (e errNoKernelMetadata) Error() string {
	return "the code object's metadata does not describe kernel " + string(e)
}

// unload forgets a module and its functions.
func (t *paramTables) unload(m uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.modules, m)
	for fn, f := range t.funcs {
		if f.module == m {
			delete(t.funcs, fn)
		}
	}
}

// params is fn's parameter list (a copy the caller may keep), or why there is none.
func (t *paramTables) params(fn uintptr) ([]hipsys.KernelParam, bool, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	f, ok := t.funcs[fn]
	if !ok {
		return nil, false, nil
	}
	if f.err != nil {
		return nil, true, f.err
	}
	return append([]hipsys.KernelParam{}, f.params...), true, nil
}

// checkLaunch is the one lookup of a launch: whether fn is a live function (false: the
// launch is hipErrorInvalidHandle), and the check of args against its parameters.
// ROCm's hipModuleLaunchKernel reads one pointer from kernelParams per parameter its
// own metadata lists, with no way to know how many were given, so a short list has it
// read past the list. A function whose metadata could not be read (a compressed offload
// bundle, code object version 2) has no parameters to compare with: its launches are
// checked for the handles only, as ROCm itself checks them.
func (t *paramTables) checkLaunch(fn uintptr, args *hipsys.KernelArgs) (live bool, _ error) {
	t.mu.RLock()
	f, ok := t.funcs[fn]
	t.mu.RUnlock()
	if !ok || f.err != nil {
		return ok, nil
	}
	return true, hipsys.CheckArgs(name, f.entry, f.sizes, args)
}

func (t *paramTables) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.modules) + len(t.funcs)
}
