package amd

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// paramTables keeps what FuncGetParams answers: each loaded module's kernel parameters,
// read from its code object's metadata when it is loaded (ROCm has no query for them),
// and each function's, looked up when ModuleGetFunction hands the function out. A
// module whose metadata could not be read keeps the reason, which FuncGetParams reports.
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
	params []hipsys.KernelParam
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
	f := funcParams{module: m, err: mp.err}
	if mp.err == nil {
		var ok bool
		if f.params, ok = mp.kernels[entry]; !ok {
			f.err = errNoKernelMetadata(entry)
		}
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

func (t *paramTables) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.modules) + len(t.funcs)
}
