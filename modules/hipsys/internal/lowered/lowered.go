// Package lowered finds the symbols name expressions designate in a linked object, for
// the platforms whose compiler does not report them itself, as hiprtcGetLoweredName and
// nvrtcGetLoweredName do: the cpu device's kernels, and the casts (one overload of
// several) that ROCm 5.2's hiprtc does not resolve.
package lowered

import (
	"bytes"
	"debug/elf"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Resolve reads, from a linked object (a shared ELF object: the cpu device's kernel
// object, an AMD code object) in which the pointer variable <prefix><i> holds the address
// of what name expression i designates, for i in [0, n), the symbol each points at: the
// expression's lowered name. The pointer's dynamic relocation says which: against a
// symbol for one the object exports (its name is the answer), relative for one it keeps
// hidden (the addend is the address, which the full symbol table names); with relative
// relocations packed (RELR), the address is stored in place. Aliases at one address give
// the first name in sort order, the same every time.
func Resolve(object []byte, prefix string, n int) ([]string, error) {
	f, err := elf.NewFile(bytes.NewReader(object))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("name expressions need a 64-bit object, not %v", f.Class)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	slots := map[string]uint64{}
	byAddr := map[uint64][]string{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, prefix) {
			slots[s.Name] = s.Value
			continue
		}
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC:
		default:
			continue
		}
		// Local clones and aliases (f.cold, f.localalias) and AMD's kernel descriptors
		// (f.kd) are no names a user knows; nor is cubehip's own code.
		if s.Name == "" || strings.Contains(s.Name, ".") || strings.HasPrefix(s.Name, "cubehip") || strings.HasPrefix(s.Name, "__cubehip") {
			continue
		}
		byAddr[s.Value] = append(byAddr[s.Value], s.Name)
	}
	dyn, _ := f.DynamicSymbols() // none when nothing is exported or imported
	type reloc struct {
		sym    uint32
		addend uint64
	}
	relocs := map[uint64]reloc{}
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_RELA {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			return nil, err
		}
		for off := 0; off+24 <= len(data); off += 24 {
			info := f.ByteOrder.Uint64(data[off+8:])
			relocs[f.ByteOrder.Uint64(data[off:])] = reloc{elf.R_SYM64(info), f.ByteOrder.Uint64(data[off+16:])}
		}
	}
	inPlace := func(addr uint64) (uint64, bool) {
		for _, sec := range f.Sections {
			if sec.Type == elf.SHT_PROGBITS && sec.Addr <= addr && addr+8 <= sec.Addr+sec.Size {
				data, err := sec.Data()
				if err != nil {
					return 0, false
				}
				return f.ByteOrder.Uint64(data[addr-sec.Addr:]), true
			}
		}
		return 0, false
	}
	out := make([]string, n)
	for i := range n {
		slot, ok := slots[prefix+strconv.Itoa(i)]
		if !ok {
			return nil, fmt.Errorf("name expression %d: no %s%d in the object", i, prefix, i)
		}
		var target uint64
		if r, ok := relocs[slot]; ok {
			if r.sym != 0 {
				if int(r.sym) > len(dyn) {
					return nil, fmt.Errorf("name expression %d: relocation against symbol %d of %d", i, r.sym, len(dyn))
				}
				out[i] = dyn[r.sym-1].Name
				continue
			}
			target = r.addend
		} else if target, ok = inPlace(slot); !ok {
			return nil, fmt.Errorf("name expression %d: %s%d is not in the object's data", i, prefix, i)
		}
		names := byAddr[target]
		if len(names) == 0 {
			return nil, fmt.Errorf("name expression %d: no symbol at %#x", i, target)
		}
		sort.Strings(names) // aliases: one answer, the same every time
		out[i] = names[0]
	}
	return out, nil
}
