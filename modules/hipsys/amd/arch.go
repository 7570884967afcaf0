package amd

// #include "trampolines.h"
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// layout is where one release's hipDeviceProp_t keeps the fields read from it. ROCm 6.0
// reordered the struct and exported the new one as hipGetDevicePropertiesR0600; the
// offsets are those of x86-64 (LP64) builds of the ROCm headers.
type layout struct {
	call             string // the HIP call that fills it, for errors
	warpOff, archOff int    // offsets of warpSize (int) and gcnArchName (char[256])
}

var (
	// ROCm 5.x hipDeviceProp_t: name[256], totalGlobalMem, sharedMemPerBlock,
	// regsPerBlock, warpSize at 276; gcnArchName after gcnArch at 396 (sizeof 792 in 5.2).
	propsR0000 = layout{call: "hipGetDeviceProperties", warpOff: 276, archOff: 396}
	// hipDeviceProp_tR0600: name[256], uuid[16], luid[8], luidDeviceNodeMask, then
	// totalGlobalMem at 288 and warpSize at 308; gcnArchName after reserved[63] and
	// hipReserved[32] at 1160 (sizeof 1472).
	propsR0600 = layout{call: "hipGetDevicePropertiesR0600", warpOff: 308, archOff: 1160}
)

// arch reads gcnArchName from a filled struct, after checking that the struct is the
// layout expected: its warpSize must be the attribute's, and the name must read "gfx…".
// Should a release ever move the field, reading garbage as an architecture would send
// hiprtc the wrong --offload-arch, so a failed check is an error naming the layout.
func (l layout) arch(buf []byte, warp int) (string, error) {
	w := int(int32(uint32(buf[l.warpOff]) | uint32(buf[l.warpOff+1])<<8 | uint32(buf[l.warpOff+2])<<16 | uint32(buf[l.warpOff+3])<<24))
	name := cString(buf[l.archOff : l.archOff+256])
	if w == warp && strings.HasPrefix(name, "gfx") {
		return name, nil
	}
	return "", fmt.Errorf("%s did not fill the expected layout: warpSize at %d reads %d (attribute says %d), "+
		"gcnArchName at %d reads %q", l.call, l.warpOff, w, warp, l.archOff, name)
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// CheckWarpSize is nil when warp is the wavefront size arch runs with (64 on GCN and
// CDNA, 32 on RDNA), or when arch is not one it knows; otherwise an error with both.
// Kernels that assume one size (a warp-shuffle reduction) give wrong results on the other.
func CheckWarpSize(arch string, warp int) error {
	want := warpSizeOf(arch)
	if want == 0 || want == warp {
		return nil
	}
	return fmt.Errorf("%s runs %d-wide wavefronts, but the device reports warpSize %d", arch, want, warp)
}

// SupportedArchs lists the AMD GPU architectures (gfx908, gfx90a, ...) the installed ROCm
// compiler can build for, from comgr's ISA table. It needs no GPU. An error means comgr
// could not be loaded; the platform then passes architectures to hiprtc unchecked.
func SupportedArchs() ([]string, error) {
	lib, err := loadDefault()
	if err != nil {
		return nil, err
	}
	return lib.archs()
}

// archs loads comgr (the library hiprtc compiles through) once and reads its ISA names.
// hiprtc of ROCm 5.x aborts the process when given an architecture its compiler does not
// know, so the list is what stands between a typo and a crash.
func (l *library) archs() ([]string, error) {
	l.isaOnce.Do(func() {
		var names []string
		for _, n := range []string{"libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"} {
			if d := l.dir(); d != "" {
				names = append(names, filepath.Join(d, n))
			}
		}
		names = append(names, "libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so")
		comgr, err := dl.Open(names...)
		if err != nil {
			l.isaErr = err
			return
		}
		count, err1 := comgr.Sym("amd_comgr_get_isa_count")
		get, err2 := comgr.Sym("amd_comgr_get_isa_name")
		if err := errors.Join(err1, err2); err != nil {
			l.isaErr = err
			return
		}
		var n C.size_t
		if r := C.amdt_isa_count(count, &n); r != 0 {
			l.isaErr = fmt.Errorf("%s: amd_comgr_get_isa_count failed with status %d", comgr.Name, int(r))
			return
		}
		seen := map[string]bool{}
		var buf [256]C.char
		for i := C.size_t(0); i < n; i++ {
			// SAFETY: buf is Go memory lent for the call; at most len(buf) bytes are written.
			if C.amdt_isa_name(get, i, &buf[0], C.size_t(len(buf))) != 0 {
				continue
			}
			// "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" → "gfx90a"
			isa := C.GoString(&buf[0])
			if _, after, ok := strings.Cut(isa, "--"); ok {
				isa = after
			}
			isa, _, _ = strings.Cut(isa, ":")
			if !seen[isa] {
				seen[isa] = true
				l.isas = append(l.isas, isa)
			}
		}
	})
	return l.isas, l.isaErr
}

// checkArch is nil when the compiler knows arch (feature suffixes such as ":xnack-"
// aside), or when the list is unavailable.
func (l *library) checkArch(arch string) error {
	isas, err := l.archs()
	if err != nil || len(isas) == 0 {
		return nil
	}
	base, _, _ := strings.Cut(arch, ":")
	for _, a := range isas {
		if a == base {
			return nil
		}
	}
	return fmt.Errorf("--offload-arch=%s: ROCm %s's compiler does not support %s (it supports %s)",
		arch, versionString(l.version), base, strings.Join(isas, ", "))
}
