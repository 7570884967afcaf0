package jit

import (
	"bytes"
	"debug/elf"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const callGetGlobal = "hipModuleGetGlobal"

// Global is a variable at namespace scope of a loaded module (a __device__ or
// __constant__ symbol): plain host memory inside the loaded object, which kernels read
// and write directly.
type Global struct {
	Addr     uintptr
	Size     uint64
	ReadOnly bool // in a read-only section (declared const): a write would fault
}

// symbol is a variable of the object's symbol table, before the object is loaded.
type symbol struct {
	value, size uint64
	readOnly    bool
}

// objectSymbols reads the variables of a kernel object from its full symbol table
// (.symtab), not the dynamic one: kernels are built with hidden visibility, so their
// globals are not exported and dlsym cannot see them, but the linker still lists them
// (as local symbols) with their offset and size. It also gives the offset of anchor, an
// exported symbol, from which the load address follows. The prelude's own state (names
// starting with cubehip) is left out: it is not the kernel's to hand to the host.
func objectSymbols(object []byte, anchor string) (map[string]symbol, uint64, bool) {
	f, err := elf.NewFile(bytes.NewReader(object))
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, 0, false
	}
	out := map[string]symbol{}
	var anchorValue uint64
	found := false
	for _, s := range syms {
		if s.Name == anchor && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			anchorValue, found = s.Value, true
			continue
		}
		if elf.ST_TYPE(s.Info) != elf.STT_OBJECT || s.Size == 0 || s.Name == "" ||
			strings.HasPrefix(s.Name, "cubehip") || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		out[s.Name] = symbol{value: s.Value, size: s.Size, readOnly: sec.Flags&elf.SHF_WRITE == 0}
	}
	return out, anchorValue, found
}

// Global finds a variable of the module by its symbol name: the name as written for a
// variable at global scope in C++ (`__constant__ float taps[16]` is "taps"), the mangled
// name for one inside a namespace, as hipModuleGetGlobal takes it on every platform.
// Errors: hipErrorNotFound naming the symbol, hipErrorInvalidHandle after Close.
func (m *Module) Global(name string) (Global, error) {
	if m == nil || m.closed.Load() {
		return Global{}, hipsys.NewError("cpu", callGetGlobal, hipsys.ErrorInvalidHandle, "module is unloaded")
	}
	s, ok := m.globals[name]
	if !ok {
		return Global{}, hipsys.NewError("cpu", callGetGlobal, hipsys.ErrorNotFound,
			"no __device__ or __constant__ variable named "+name+" in the module")
	}
	return Global{Addr: m.base + uintptr(s.value), Size: s.size, ReadOnly: s.readOnly}, nil
}
