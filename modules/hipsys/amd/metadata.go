package amd

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Kernel is one kernel of a code object as its metadata describes it.
type Kernel struct {
	Name   string               // the entry point's name, as ModuleGetFunction takes it
	Params []hipsys.KernelParam // its parameters in declaration order, hidden ones left out
}

// ntAMDGPUMetadata is the note type of the code object metadata (code object version 3
// and later: a MessagePack map) in a note named "AMDGPU". Version 2's YAML note (type
// 10, named "AMD") is from before ROCm 3 and not read.
const ntAMDGPUMetadata = 32

// metadataKernels reads the kernels of an AMDGPU ELF's metadata note. found is false
// when the ELF has no such note; err says what is wrong with one that does not parse.
func metadataKernels(f *elf.File) (kernels []Kernel, found bool, err error) {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, false, fmt.Errorf("amd: reading the %s section: %w", s.Name, err)
		}
		desc, ok, err := findNote(data, f.ByteOrder, "AMDGPU", ntAMDGPUMetadata)
		if err != nil {
			return nil, false, fmt.Errorf("amd: the %s section: %w", s.Name, err)
		}
		if !ok {
			continue
		}
		kernels, err := parseMetadata(desc)
		return kernels, true, err
	}
	return nil, false, nil
}

// findNote walks the notes of a SHT_NOTE section (each: name size, descriptor size and
// type as 4-byte words, then the name and the descriptor, each padded to 4 bytes) and
// returns the descriptor of the first note with the given name and type.
func findNote(data []byte, order binary.ByteOrder, name string, typ uint32) ([]byte, bool, error) {
	pad := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for off := uint64(0); off < uint64(len(data)); {
		if uint64(len(data))-off < 12 {
			return nil, false, fmt.Errorf("a note header at byte %d is truncated", off)
		}
		namesz := uint64(order.Uint32(data[off:]))
		descsz := uint64(order.Uint32(data[off+4:]))
		t := order.Uint32(data[off+8:])
		off += 12
		if pad(namesz) > uint64(len(data))-off {
			return nil, false, fmt.Errorf("a note name of %d bytes runs past the section", namesz)
		}
		n := string(bytes.TrimRight(data[off:off+namesz], "\x00"))
		off += pad(namesz)
		if descsz > uint64(len(data))-off {
			return nil, false, fmt.Errorf("a note of %d bytes runs past the section", descsz)
		}
		desc := data[off : off+descsz]
		off += min(pad(descsz), uint64(len(data))-off)
		if n == name && t == typ {
			return desc, true, nil
		}
	}
	return nil, false, nil
}

// parseMetadata reads "amdhsa.kernels" out of the metadata map: for each kernel its
// ".name" and ".args", and for each argument its ".offset", ".size", ".value_kind" and
// (where the compiler kept it) ".name". Arguments whose value kind starts with
// "hidden_" are the ones the compiler appends for the runtime (the grid size, the
// printf buffer, ...), which no caller passes, and are left out.
func parseMetadata(desc []byte) ([]Kernel, error) {
	v, err := decodeMsgpack(desc)
	if err != nil {
		return nil, fmt.Errorf("amd: code object metadata: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("amd: code object metadata is a %T, not a map", v)
	}
	list, ok := root["amdhsa.kernels"].([]any)
	if !ok {
		return nil, fmt.Errorf("amd: code object metadata has no amdhsa.kernels list")
	}
	kernels := make([]Kernel, 0, len(list))
	for i, kv := range list {
		km, ok := kv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("amd: metadata kernel %d is a %T, not a map", i, kv)
		}
		name, ok := km[".name"].(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("amd: metadata kernel %d has no .name", i)
		}
		k := Kernel{Name: name, Params: []hipsys.KernelParam{}}
		args, _ := km[".args"].([]any) // a kernel without parameters may have no .args
		if _, present := km[".args"]; present && args == nil {
			return nil, fmt.Errorf("amd: metadata kernel %s: .args is not a list", name)
		}
		for j, av := range args {
			p, hidden, err := metadataArg(av)
			if err != nil {
				return nil, fmt.Errorf("amd: metadata kernel %s, argument %d: %w", name, j, err)
			}
			if !hidden {
				k.Params = append(k.Params, p)
			}
		}
		kernels = append(kernels, k)
	}
	return kernels, nil
}

// metadataArg reads one entry of a kernel's .args.
func metadataArg(v any) (p hipsys.KernelParam, hidden bool, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return p, false, fmt.Errorf("a %T, not a map", v)
	}
	kind, ok := m[".value_kind"].(string)
	if !ok {
		return p, false, fmt.Errorf("no .value_kind")
	}
	offset, ok1 := m[".offset"].(uint64)
	size, ok2 := m[".size"].(uint64)
	if !ok1 || !ok2 || offset > 1<<32-1 || size > 1<<32-1 {
		return p, false, fmt.Errorf("no valid .offset and .size")
	}
	p = hipsys.KernelParam{Offset: uint32(offset), Size: uint32(size)}
	p.Name, _ = m[".name"].(string)
	switch {
	case strings.HasPrefix(kind, "hidden_"):
		return p, true, nil
	case kind == "global_buffer":
		p.Kind = hipsys.ParamPointer
	case kind == "by_value":
		p.Kind = hipsys.ParamValue
	default:
		// dynamic_shared_pointer, image, sampler, pipe, queue: OpenCL's kinds, which a
		// HIP kernel does not have; the size and offset are still right.
		p.Kind = hipsys.ParamUnknown
	}
	return p, false, nil
}
