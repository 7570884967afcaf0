package amd

// #include <stdlib.h>
// #include "trampolines.h"
import "C"

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// rtcHeadersVersion is the first HIP whose hiprtc carries the HIP headers itself (6.1);
// before it, hiprtc must be pointed at the headers of its own ROCm with -I.
const rtcHeadersVersion = 60100000

// program is a live hiprtcProgram. Its mutex serializes the calls on it: hiprtc programs
// are not safe for concurrent use, and a destroy racing a compile would free the program
// under it.
type program struct {
	mu   sync.Mutex
	h    uintptr
	dead bool
	// refused is the log of a program that launches a kernel from device code
	// (hipsys.DeviceLaunchLog): its compile fails with it, before hiprtc runs.
	refused string
}

type programs struct {
	mu sync.Mutex
	m  map[hipsys.Program]*program
}

func newPrograms() *programs { return &programs{m: map[hipsys.Program]*program{}} }

// lock returns the live program locked, or nil.
func (ps *programs) lock(id hipsys.Program) *program {
	ps.mu.Lock()
	pr := ps.m[id]
	ps.mu.Unlock()
	if pr == nil {
		return nil
	}
	pr.mu.Lock()
	if pr.dead {
		pr.mu.Unlock()
		return nil
	}
	return pr
}

func (ps *programs) len() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.m)
}

func badProgram(call string) error {
	return hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidProgram, "not a live program of this platform")
}

// RTCCreateProgram is hiprtcCreateProgram; hiprtc copies the source and headers.
func (p *Platform) RTCCreateProgram(source, progName string, headers []hipsys.Header) (hipsys.Program, error) {
	h, err := p.lib.create(source, progName, headers)
	if err != nil {
		return 0, err
	}
	if progName == "" {
		progName = "default_program"
	}
	refused := hipsys.DeviceLaunchLog(source, progName, headers)
	p.programs.mu.Lock()
	p.programs.m[hipsys.Program(h)] = &program{h: h, refused: refused}
	p.programs.mu.Unlock()
	return hipsys.Program(h), nil
}

// RTCCompileProgram is hiprtcCompileProgram for the current device: unless options name
// an --offload-arch, the device's gcnArchName is used. cubehip's hiprtc header and, before
// ROCm 6.1, its stand-ins for the hip/ headers join the program (rtcProgram). A failed compile is RTCErrorCompilation with hiprtc's log;
// a program that launches a kernel from device code fails so without running hiprtc
// (hipsys.DeviceLaunchLog).
func (p *Platform) RTCCompileProgram(prog hipsys.Program, options []string) error {
	const call = "hiprtcCompileProgram"
	arch := ""
	if explicitArch(options) == "" {
		var err error
		if arch, err = p.currentArch(); err != nil {
			return hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidOption,
				"no --offload-arch given, and none from the current device: "+err.Error())
		}
	}
	pr := p.programs.lock(prog)
	if pr == nil {
		return badProgram(call)
	}
	defer pr.mu.Unlock()
	if pr.refused != "" {
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorCompilation, pr.refused)
	}
	return p.lib.compile(pr.h, arch, options)
}

// currentArch is the gcnArchName of the calling thread's current device.
func (p *Platform) currentArch() (string, error) {
	dev, err := p.GetDevice()
	if err != nil {
		return "", err
	}
	p.propsMu.Lock()
	d, ok := p.props[dev]
	p.propsMu.Unlock()
	if !ok {
		if d, err = p.GetDeviceProperties(dev); err != nil {
			return "", err
		}
	}
	return d.ArchName, nil
}

// RTCGetProgramLog is hiprtcGetProgramLog.
func (p *Platform) RTCGetProgramLog(prog hipsys.Program) (string, error) {
	pr := p.programs.lock(prog)
	if pr == nil {
		return "", badProgram("hiprtcGetProgramLog")
	}
	defer pr.mu.Unlock()
	if pr.refused != "" {
		return pr.refused, nil
	}
	return p.lib.programLog(pr.h)
}

// RTCGetCode is hiprtcGetCode: the code object, for ModuleLoadData, in Go memory.
func (p *Platform) RTCGetCode(prog hipsys.Program) ([]byte, error) {
	pr := p.programs.lock(prog)
	if pr == nil {
		return nil, badProgram("hiprtcGetCode")
	}
	defer pr.mu.Unlock()
	return p.lib.code(pr.h)
}

// RTCDestroyProgram is hiprtcDestroyProgram.
func (p *Platform) RTCDestroyProgram(prog hipsys.Program) error {
	p.programs.mu.Lock()
	pr := p.programs.m[prog]
	delete(p.programs.m, prog)
	p.programs.mu.Unlock()
	if pr == nil {
		return badProgram("hiprtcDestroyProgram")
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.dead = true
	return p.lib.destroy(pr.h)
}

// explicitArch is the architecture options name, "" when none does.
func explicitArch(options []string) string {
	for _, o := range options {
		for _, pre := range []string{"--offload-arch=", "--gpu-architecture=", "-arch="} {
			if v, ok := strings.CutPrefix(o, pre); ok {
				return v
			}
		}
	}
	return ""
}

// rtcOptions are the options hiprtc is given: cubehip's defaults (-O3, C++17) where the
// caller set none, HIP's _sync warp functions from 6.2, --offload-arch=arch unless
// the caller named one, then the caller's own, which come last so that they win.
func (l *library) rtcOptions(arch string, user []string) ([]string, error) {
	has := func(prefixes ...string) bool {
		for _, o := range user {
			for _, pre := range prefixes {
				if strings.HasPrefix(o, pre) {
					return true
				}
			}
		}
		return false
	}
	var opts []string
	if !has("-O") {
		opts = append(opts, "-O3")
	}
	if !has("-std=", "--std=") {
		opts = append(opts, "-std=c++17")
	}
	// Before 6.1 hiprtc's preamble holds hip_runtime.h and hip_fp16.h, and cubehip gives
	// the hip/ names as headers of the program (rtcProgram): the ROCm include directory
	// is not passed, since its headers would define the preamble's content again.
	if l.version >= warpSyncVersion && !has("-DHIP_ENABLE_WARP_SYNC_BUILTINS") {
		opts = append(opts, "-DHIP_ENABLE_WARP_SYNC_BUILTINS")
	}
	if a := explicitArch(user); a != "" {
		arch = a
	} else {
		opts = append(opts, "--offload-arch="+arch)
	}
	if err := l.checkArch(arch); err != nil {
		return nil, err
	}
	return append(opts, user...), nil
}

// cStrings copies ss into one C array of C strings; free releases all of it.
func cStrings(ss []string) (arr **C.char, free func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	ptrs := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof(uintptr(0)))))[:len(ss):len(ss)]
	for i, s := range ss {
		ptrs[i] = C.CString(s)
	}
	return &ptrs[0], func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&ptrs[0]))
	}
}
