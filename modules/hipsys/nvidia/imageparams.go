package nvidia

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"strconv"
	"strings"
)

// imageParamSizes reads each kernel's parameter sizes, by kernel name, from a module
// image: what a launch is checked against when the driver has no cuFuncGetParamInfo
// (before CUDA 12.4). A kernel it cannot read is absent, and its launches are not
// checked. It reads the two forms NVRTC gives (RTCGetCode) and a hand-written image takes:
//
//   - CUBIN: each kernel's .nv.info.<name> section lists its parameters as
//     EIATTR_KPARAM_INFO records (or EIATTR_KPARAM_INFO_V2 from newer compilers), which
//     the driver itself reads to copy the arguments: the ordinal, offset and size of
//     each. The format is NVIDIA's and undocumented; the GPU tests compare what is read
//     here with cuFuncGetParamInfo's answer for the same kernels.
//   - PTX: each .entry declares its parameters, with their types and array lengths.
//
// Anything else (a fatbinary) is left unread.
func imageParamSizes(image []byte) map[string][]uint32 {
	if bytes.HasPrefix(image, []byte(elf.ELFMAG)) {
		return cubinParamSizes(image)
	}
	return ptxParamSizes(string(image))
}

// The .nv.info records cubinParamSizes reads: each is a format byte, an attribute byte
// and a 16-bit field that, for EIFMT_SVAL, is the length of the value that follows (for
// the other formats it is the value itself).
const (
	eifmtSVal         = 0x04
	eiattrKParamInfo  = 0x17 // index u32, ordinal u16, offset u16, flags u32 (size in bits 18-31)
	eiattrKParamInfo2 = 0x45 // index u32, ordinal u16, offset u16, then the size in 16 bits
	kparamInfoLen     = 12
)

func cubinParamSizes(image []byte) map[string][]uint32 {
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string][]uint32{}
	for _, s := range f.Sections {
		name, ok := strings.CutPrefix(s.Name, ".nv.info.")
		if !ok || s.Type == elf.SHT_NOBITS {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if sizes, ok := kparamSizes(data); ok {
			out[name] = sizes
		}
	}
	return out
}

// kparamSizes reads the parameter records of one kernel's .nv.info section; false when
// there are none or they do not number the parameters 0, 1, ... once each.
func kparamSizes(data []byte) ([]uint32, bool) {
	bySlot := map[uint16]uint32{}
	for len(data) >= 4 {
		format, attr, field := data[0], data[1], binary.LittleEndian.Uint16(data[2:])
		data = data[4:]
		if format != eifmtSVal {
			continue
		}
		if int(field) > len(data) {
			return nil, false
		}
		v := data[:field]
		data = data[field:]
		if (attr != eiattrKParamInfo && attr != eiattrKParamInfo2) || len(v) != kparamInfoLen {
			continue
		}
		ordinal := binary.LittleEndian.Uint16(v[4:])
		size := binary.LittleEndian.Uint32(v[8:]) >> 18
		if attr == eiattrKParamInfo2 {
			size = uint32(binary.LittleEndian.Uint16(v[8:]))
		}
		if _, dup := bySlot[ordinal]; dup || size == 0 {
			return nil, false
		}
		bySlot[ordinal] = size
	}
	if len(bySlot) == 0 {
		return nil, false
	}
	sizes := make([]uint32, len(bySlot))
	for ord, size := range bySlot {
		if int(ord) >= len(sizes) {
			return nil, false
		}
		sizes[ord] = size
	}
	return sizes, true
}

// ptxParamSizes reads each .entry's parameter list: ".param .u64 name", ".param .align 8
// .b8 name[24]", ".param .u64 .ptr .global .align 4 name", the type's width times the
// array's length.
func ptxParamSizes(ptx string) map[string][]uint32 {
	var text strings.Builder // without comments
	for line := range strings.SplitSeq(ptx, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		text.WriteString(line)
		text.WriteByte('\n')
	}
	out := map[string][]uint32{}
	rest := text.String()
	for {
		i := strings.Index(rest, ".entry")
		if i < 0 {
			return out
		}
		rest = rest[i+len(".entry"):]
		open := strings.IndexByte(rest, '(')
		closing := strings.IndexByte(rest, ')')
		if open < 0 || closing < open {
			return out
		}
		name := strings.TrimSpace(rest[:open])
		list := strings.TrimSpace(rest[open+1 : closing])
		rest = rest[closing+1:]
		if name == "" || strings.ContainsAny(name, " \t\n{;") {
			continue
		}
		sizes := []uint32{}
		ok := true
		if list != "" {
			for p := range strings.SplitSeq(list, ",") {
				n, good := ptxParamSize(strings.Fields(p))
				if !good {
					ok = false
					break
				}
				sizes = append(sizes, n)
			}
		}
		if ok {
			out[name] = sizes
		}
	}
}

// ptxParamSize is the size of one parameter declaration, split into fields.
func ptxParamSize(fields []string) (uint32, bool) {
	if len(fields) < 3 || fields[0] != ".param" {
		return 0, false
	}
	var width uint32
	for _, f := range fields[1 : len(fields)-1] {
		if w, ok := ptxTypeWidth(f); ok {
			width = w
		}
	}
	if width == 0 {
		return 0, false
	}
	name := fields[len(fields)-1]
	count := uint64(1)
	if i := strings.IndexByte(name, '['); i >= 0 {
		n, err := strconv.ParseUint(strings.TrimSuffix(name[i+1:], "]"), 10, 32)
		if err != nil || !strings.HasSuffix(name, "]") || n == 0 {
			return 0, false
		}
		count = n
	}
	if size := uint64(width) * count; size <= maxParams {
		return uint32(size), true
	}
	return 0, false
}

// ptxTypeWidth is the width in bytes of a PTX fundamental type (.u64, .f32, .b8, ...).
func ptxTypeWidth(t string) (uint32, bool) {
	if len(t) < 3 || t[0] != '.' || !strings.ContainsRune("usbf", rune(t[1])) {
		return 0, false
	}
	bits, err := strconv.Atoi(t[2:])
	if err != nil || bits < 8 || bits > 64 || bits&(bits-1) != 0 {
		return 0, false
	}
	return uint32(bits / 8), true
}
