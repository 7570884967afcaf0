package amd

// #include "trampolines.h"
import "C"

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

// funcAttrs are a function's settable attributes as FuncSetAttribute left them. ROCm's
// hipFuncSetAttribute takes a host function's address, not a module's hipFunction_t, and
// an AMD kernel needs no opt-in to use all of its LDS, so the platform keeps the values
// itself and answers them back.
type funcAttrs struct {
	maxDynShared, carveout int
	hasMax, hasCarveout    bool
}

// FuncGetAttribute is hipFuncGetAttribute, or the value FuncSetAttribute gave
// MAX_DYNAMIC_SHARED_SIZE_BYTES or PREFERRED_SHARED_MEMORY_CARVEOUT. A library without
// the call is hipErrorNotSupported.
func (p *Platform) FuncGetAttribute(fn hipsys.Function, attr hipsys.FuncAttribute) (int, error) {
	const call = "hipFuncGetAttribute"
	if !p.functions.has(uintptr(fn)) {
		return 0, badHandle(call, "function")
	}
	if !attr.Valid() {
		return 0, invalid(call, hipsys.ErrorInvalidValue, "unknown attribute "+attr.String())
	}
	p.attrsMu.Lock()
	a := p.attrs[uintptr(fn)]
	p.attrsMu.Unlock()
	if a != nil {
		if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes && a.hasMax {
			return a.maxDynShared, nil
		}
		if attr == hipsys.FuncAttributePreferredSharedMemoryCarveout && a.hasCarveout {
			return a.carveout, nil
		}
	}
	return p.driverFuncAttr(call, fn, attr)
}

func (p *Platform) driverFuncAttr(call string, fn hipsys.Function, attr hipsys.FuncAttribute) (int, error) {
	if p.lib.s.funcGetAttribute == nil {
		return 0, invalid(call, hipsys.ErrorNotSupported, "this ROCm has no hipFuncGetAttribute")
	}
	var v C.int
	if err := check(call, C.amdt_func_attr(p.lib.s.funcGetAttribute, &v, C.int(attr), C.uintptr_t(fn))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// FuncSetAttribute checks the value (MAX_DYNAMIC_SHARED_SIZE_BYTES up to what ROCm says
// the kernel may have, its LDS less the static part) and keeps it for FuncGetAttribute.
func (p *Platform) FuncSetAttribute(fn hipsys.Function, attr hipsys.FuncAttribute, value int) error {
	const call = "hipFuncSetAttribute"
	if !p.functions.has(uintptr(fn)) {
		return badHandle(call, "function")
	}
	limit := uint64(1<<31 - 1)
	if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes {
		v, err := p.driverFuncAttr(call, fn, attr)
		if err != nil {
			return err
		}
		limit = uint64(max(v, 0))
	}
	if err := hipsys.CheckFuncSetAttribute(name, attr, value, limit); err != nil {
		return err
	}
	p.attrsMu.Lock()
	defer p.attrsMu.Unlock()
	a := p.attrs[uintptr(fn)]
	if a == nil {
		a = &funcAttrs{}
		p.attrs[uintptr(fn)] = a
	}
	if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes {
		a.maxDynShared, a.hasMax = value, true
	} else {
		a.carveout, a.hasCarveout = value, true
	}
	return nil
}

// dropFuncAttrs forgets the values of functions retired with their module, so that a
// handle ROCm reuses starts afresh.
func (p *Platform) dropFuncAttrs() {
	p.attrsMu.Lock()
	defer p.attrsMu.Unlock()
	for fn := range p.attrs {
		if !p.functions.has(fn) {
			delete(p.attrs, fn)
		}
	}
}
