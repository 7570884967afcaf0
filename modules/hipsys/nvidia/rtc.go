package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// nvrtcLib is the loaded NVRTC.
type nvrtcLib struct {
	lib          *dl.Library
	major, minor int
	archs        []int    // compute capabilities NVRTC builds for, nil when it cannot say
	includes     []string // the toolkit's header folders, for cuda_fp16.h
}

// nvrtcLibraryNames are NVRTC's sonames, newest first (CUDA 11.0 and 11.1 had their own;
// 11.2 onwards kept libnvrtc.so.11.2 for all of 11.x), each also tried inside the
// toolkit folders a runtime-only loader path may not list.
func nvrtcLibraryNames() []string {
	sonames := []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so.11.1", "libnvrtc.so.11.0"}
	names := append([]string(nil), sonames...)
	for _, dir := range cudaDirs("lib64", "targets/x86_64-linux/lib") {
		for _, s := range sonames {
			names = append(names, filepath.Join(dir, s))
		}
	}
	return names
}

// cudaDirs are the existing sub folders of the CUDA toolkit's candidate homes.
func cudaDirs(subs ...string) []string {
	var out []string
	for _, home := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if home == "" {
			continue
		}
		for _, s := range subs {
			d := filepath.Join(home, s)
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				out = append(out, d)
			}
		}
	}
	return out
}

// loadNVRTC opens NVRTC once, on the first hiprtc call.
func (p *Platform) loadNVRTC() (*nvrtcLib, error) {
	p.rtcOnce.Do(func() { p.rtc, p.rtcErr = openNVRTC() })
	return p.rtc, p.rtcErr
}

func openNVRTC() (*nvrtcLib, error) {
	lib, err := dl.Open(nvrtcLibraryNames()...)
	if err != nil {
		return nil, err
	}
	f := &C.cubehip_nvrtc
	if err := lib.Resolve([]dl.Entry{
		entry(&f.version, "nvrtcVersion"), entry(&f.createProgram, "nvrtcCreateProgram"),
		entry(&f.compileProgram, "nvrtcCompileProgram"), entry(&f.destroyProgram, "nvrtcDestroyProgram"),
		entry(&f.getProgramLogSize, "nvrtcGetProgramLogSize"), entry(&f.getProgramLog, "nvrtcGetProgramLog"),
		entry(&f.getCUBINSize, "nvrtcGetCUBINSize"), entry(&f.getCUBIN, "nvrtcGetCUBIN"),
		entry(&f.getPTXSize, "nvrtcGetPTXSize"), entry(&f.getPTX, "nvrtcGetPTX"),
		entry(&f.addNameExpression, "nvrtcAddNameExpression"), entry(&f.getLoweredName, "nvrtcGetLoweredName"),
	}); err != nil {
		return nil, err
	}
	// Optional (CUDA 11.2+): without them the device's own SM is asked for.
	*entryAddr(&f.getNumSupportedArchs) = lib.Lookup("nvrtcGetNumSupportedArchs")
	*entryAddr(&f.getSupportedArchs) = lib.Lookup("nvrtcGetSupportedArchs")

	n := &nvrtcLib{lib: lib}
	var major, minor C.int
	if r := C.nv_version(&major, &minor); r != 0 {
		return nil, fmt.Errorf("%s: nvrtcVersion failed (%d)", lib.Name, int(r))
	}
	n.major, n.minor = int(major), int(minor)
	var buf [128]C.int
	var cnt C.int
	if C.nv_archs(&buf[0], C.int(len(buf)), &cnt) == 0 {
		for _, a := range buf[:cnt] {
			n.archs = append(n.archs, int(a))
		}
	}
	// NVRTC (13.0 included) has no cuda_fp16.h or cuda_bf16.h of its own: they come
	// from the toolkit's include folder, and CUDA 13's include the CCCL headers kept in
	// its cccl sub folder. Without a toolkit folder only hip_fp16.h and hip_bf16.h fail.
	for _, d := range cudaDirs("include", "targets/x86_64-linux/include") {
		if _, err := os.Stat(filepath.Join(d, "cuda_fp16.h")); err == nil {
			n.includes = append(n.includes, d)
			if st, err := os.Stat(filepath.Join(d, "cccl")); err == nil && st.IsDir() {
				n.includes = append(n.includes, filepath.Join(d, "cccl"))
			}
			break
		}
	}
	return n, nil
}

// cStrings copies Go strings into a C array of C strings; free releases them all.
func cStrings(ss []string) (arr **C.char, free func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	raw := C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	list := unsafe.Slice((**C.char)(raw), len(ss))
	for i, s := range ss {
		list[i] = C.CString(s)
	}
	return (**C.char)(raw), func() {
		for _, c := range list {
			C.free(unsafe.Pointer(c))
		}
		C.free(raw)
	}
}
