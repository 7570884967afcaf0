package cpu

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// globalTable is the module variables the host has asked for by name (ModuleGetGlobal):
// ranges of the loaded kernel objects that copies and memsets may use as device memory,
// as on a GPU. A range is counted once per module that handed it out, because loading
// the same code object twice maps one copy of its variables (the dynamic loader opens a
// file once per process), and the range stays usable until the last of those modules is
// unloaded.
type globalTable struct {
	mu     sync.RWMutex
	ranges map[uintptr]*globalRange // by start address
}

type globalRange struct {
	size     uint64
	readOnly bool
	refs     int
}

// add counts one more module handing out [addr, addr+size).
func (t *globalTable) add(addr uintptr, size uint64, readOnly bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ranges == nil {
		t.ranges = map[uintptr]*globalRange{}
	}
	if r, ok := t.ranges[addr]; ok {
		r.refs++
		return
	}
	t.ranges[addr] = &globalRange{size: size, readOnly: readOnly, refs: 1}
}

// drop undoes one add.
func (t *globalTable) drop(addr uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.ranges[addr]; ok {
		if r.refs--; r.refs == 0 {
			delete(t.ranges, addr)
		}
	}
}

// contains reports whether [addr, addr+size) lies inside one variable handed out, and
// whether that variable may be written. It is only asked after the allocation table
// said no, so a scan of the few variables a program names costs nothing on the common
// path.
func (t *globalTable) contains(addr uintptr, size uint64) (inside, writable bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for base, r := range t.ranges {
		if addr >= base && uint64(addr-base) < r.size && size <= r.size-uint64(addr-base) {
			return true, !r.readOnly
		}
	}
	return false, false
}

// ModuleGetGlobal finds a __device__ or __constant__ variable of a loaded module by its
// symbol name and gives its address and size. On this device a module variable is
// memory of the loaded kernel object, which kernels address directly; from this call
// until the module is unloaded, copies and memsets take it (and any range inside it) as
// they take a hipMalloc'ed block. A variable declared const sits in read-only memory
// here: it can be read, and writing it is hipErrorInvalidValue. An unknown module is
// hipErrorInvalidHandle, an unknown name hipErrorNotFound.
func (p *Platform) ModuleGetGlobal(mh hipsys.Module, symbol string) (hipsys.DevicePtr, uint64, error) {
	const call = "hipModuleGetGlobal"
	m := p.modules.get(uintptr(mh))
	if m == nil {
		return 0, 0, errorf(call, hipsys.ErrorInvalidHandle, "unknown or unloaded module")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g, err := m.jm.Global(symbol)
	if err != nil {
		return 0, 0, err
	}
	if _, seen := m.globals[g.Addr]; !seen {
		m.globals[g.Addr] = struct{}{}
		p.globals.add(g.Addr, g.Size, g.ReadOnly)
	}
	return hipsys.DevicePtr(g.Addr), g.Size, nil
}

// dropGlobals retires the variables m handed out; the caller holds m.mu.
func (p *Platform) dropGlobals(m *module) {
	for addr := range m.globals {
		p.globals.drop(addr)
	}
	clear(m.globals)
}

// deviceRange reports whether [addr, addr+size) is device memory a copy may use: inside
// one live hipMalloc'ed block, or inside one module variable handed out by
// ModuleGetGlobal (writable ones only when write), or inside one imported range.
func (p *Platform) deviceRange(addr uintptr, size uint64, write bool) bool {
	if p.device.contains(addr, size) {
		return true
	}
	inside, writable := p.globals.contains(addr, size)
	if inside && (writable || !write) {
		return true
	}
	return p.imports.deviceOf(addr, size) >= 0
}
