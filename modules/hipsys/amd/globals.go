package amd

// #include <stdlib.h>
// #include "trampolines.h"
import "C"

import (
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// moduleVars is the module variables the host has asked for by name: each module's
// ranges, so ModuleUnload can retire them, and one allocation set over all of them that
// the device allocation set falls back on (allocs.also), so a copy to or from a
// variable passes the same range check as one to hipMalloc'ed memory.
type moduleVars struct {
	mu       sync.Mutex
	byModule map[uintptr]map[uintptr]uint64 // module -> variable address -> size
	spans    *allocs
}

func newModuleVars() *moduleVars {
	return &moduleVars{byModule: map[uintptr]map[uintptr]uint64{}, spans: &allocs{any: "module variable"}}
}

// add records that module m handed out [addr, addr+size); once per variable.
func (v *moduleVars) add(m, addr uintptr, size uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	vars := v.byModule[m]
	if vars == nil {
		vars = map[uintptr]uint64{}
		v.byModule[m] = vars
	}
	if _, ok := vars[addr]; ok || size == 0 {
		return
	}
	vars[addr] = size
	v.spans.add(addr, size)
}

// unload retires module m's variables: their memory goes with the module.
func (v *moduleVars) unload(m uintptr) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for addr := range v.byModule[m] {
		v.spans.remove(addr)
	}
	delete(v.byModule, m)
}

// ModuleGetGlobal is hipModuleGetGlobal: the device address and size of a __device__ or
// __constant__ variable of a loaded module, by symbol name. Until the module is
// unloaded, the copy calls take the variable's range as device memory. An unknown
// module is hipErrorInvalidHandle; an unknown name is HIP's status (hipErrorNotFound).
func (p *Platform) ModuleGetGlobal(m hipsys.Module, symbol string) (hipsys.DevicePtr, uint64, error) {
	const call = "hipModuleGetGlobal"
	if !p.modules.has(uintptr(m)) {
		return 0, 0, badHandle(call, "module")
	}
	cname := C.CString(symbol)
	defer C.free(unsafe.Pointer(cname))
	var ptr C.uintptr_t
	var size C.size_t
	if r := C.amdt_get_global(p.lib.s.moduleGetGlobal, &ptr, &size, C.uintptr_t(m), cname); r != 0 {
		// HIP's status alone does not say which name it was asked for.
		return 0, 0, invalid(call, hipStatus(r), "module variable "+symbol)
	}
	p.vars.add(uintptr(m), uintptr(ptr), uint64(size))
	return hipsys.DevicePtr(ptr), uint64(size), nil
}
