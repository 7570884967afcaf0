package amd

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const emAMDGPU = 224 // EM_AMDGPU, the e_machine of every AMD GPU code object

// CodeObject is what an AMDGPU code object says about itself.
type CodeObject struct {
	ELF     []byte   // the ELF image (taken out of its offload bundle, if it came in one)
	Mach    uint32   // EF_AMDGPU_MACH from e_flags
	Arch    string   // the architecture Mach names ("gfx90a"); "" for one this package does not know
	Symbols []string // function symbols: the kernel entry points and any non-inlined helpers
	// Kernels are the kernels the metadata note describes, with their parameters (nil
	// for a code object without the note; code object version 3 and later have it).
	Kernels []Kernel
}

// machs maps EF_AMDGPU_MACH_AMDGCN_* (the low byte of e_flags) to the architecture name,
// as LLVM's ELF.h numbers them; the test compiles for each one the installed ROCm
// supports and checks the number hiprtc writes.
var machs = map[uint32]string{
	0x20: "gfx600", 0x21: "gfx601", 0x22: "gfx700", 0x23: "gfx701", 0x24: "gfx702", 0x25: "gfx703",
	0x26: "gfx704", 0x28: "gfx801", 0x29: "gfx802", 0x2a: "gfx803", 0x2b: "gfx810", 0x3a: "gfx602",
	0x3b: "gfx705", 0x3c: "gfx805",
	0x2c: "gfx900", 0x2d: "gfx902", 0x2e: "gfx904", 0x2f: "gfx906", 0x30: "gfx908", 0x31: "gfx909",
	0x32: "gfx90c", 0x33: "gfx1010", 0x34: "gfx1011", 0x35: "gfx1012", 0x36: "gfx1030", 0x37: "gfx1031",
	0x38: "gfx1032", 0x39: "gfx1033", 0x3d: "gfx1035", 0x3e: "gfx1034", 0x3f: "gfx90a", 0x40: "gfx940",
	0x41: "gfx1100", 0x42: "gfx1013", 0x43: "gfx1150", 0x44: "gfx1103", 0x45: "gfx1036", 0x46: "gfx1101",
	0x47: "gfx1102", 0x48: "gfx1200", 0x4a: "gfx1151", 0x4b: "gfx941", 0x4c: "gfx942", 0x4e: "gfx1201",
	0x4f: "gfx950",
}

// ParseCodeObject reads an AMDGPU code object as hiprtc or CompileFor gives it: an ELF,
// or a clang offload bundle, from which the entry for arch is taken (the only AMDGPU
// entry when arch is "").
func ParseCodeObject(code []byte, arch string) (*CodeObject, error) {
	img := code
	if bytes.HasPrefix(code, []byte(bundleMagic)) || bytes.HasPrefix(code, []byte(compressedBundleMagic)) {
		var err error
		if img, err = unbundle(code, arch); err != nil {
			return nil, err
		}
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("amd: code object is not an ELF: %w", err)
	}
	defer f.Close()
	if f.Machine != emAMDGPU || f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("amd: code object is an ELF for machine %d (class %v), not AMDGPU (224)", f.Machine, f.Class)
	}
	// debug/elf does not expose e_flags; in ELF64 it is the word at offset 48.
	co := &CodeObject{ELF: img, Mach: binary.LittleEndian.Uint32(img[48:]) & 0xff}
	co.Arch = machs[co.Mach]
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("amd: code object has no symbol table: %w", err)
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Name != "" {
			co.Symbols = append(co.Symbols, s.Name)
		}
	}
	if co.Kernels, _, err = metadataKernels(f); err != nil {
		return nil, err
	}
	return co, nil
}

// KernelParams lists each kernel's parameters, by kernel name, from the metadata of an
// AMDGPU code object (as ParseCodeObject takes it): what hipFuncGetParams answers on
// this platform, read without a GPU. A code object without the metadata note is an
// error saying so.
func KernelParams(code []byte, arch string) (map[string][]hipsys.KernelParam, error) {
	co, err := ParseCodeObject(code, arch)
	if err != nil {
		return nil, err
	}
	if co.Kernels == nil {
		return nil, fmt.Errorf("amd: the code object has no AMDGPU metadata note (code object version 2?)")
	}
	out := make(map[string][]hipsys.KernelParam, len(co.Kernels))
	for _, k := range co.Kernels {
		out[k.Name] = k.Params
	}
	return out, nil
}

// CheckCodeObject is nil when code is an AMDGPU code object for arch (feature suffixes
// such as ":xnack-" aside; not checked for an architecture this package has no number
// for) whose symbol table holds every one of entries; otherwise an error naming what
// differs.
func CheckCodeObject(code []byte, arch string, entries ...string) error {
	co, err := ParseCodeObject(code, arch)
	if err != nil {
		return err
	}
	base, _, _ := strings.Cut(arch, ":")
	if want, known := machOf(base); known && co.Mach != want {
		return fmt.Errorf("amd: code object is for %s (mach %#x), not %s (mach %#x)", co.Arch, co.Mach, base, want)
	}
	var missing []string
	for _, e := range entries {
		if !slices.Contains(co.Symbols, e) {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("amd: code object for %s lacks entry point %s (it has %s)",
			base, strings.Join(missing, ", "), strings.Join(co.Symbols, ", "))
	}
	return nil
}

// machOf is the EF_AMDGPU_MACH of an architecture, when the table has it.
func machOf(arch string) (uint32, bool) {
	for m, a := range machs {
		if a == arch {
			return m, true
		}
	}
	return 0, false
}
