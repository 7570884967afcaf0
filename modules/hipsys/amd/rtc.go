package amd

// #include <stdlib.h>
// #include "trampolines.h"
import "C"

import (
	"errors"
	"slices"
	"strconv"
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
	// The name expressions given to hiprtc, and whether a compile ran and succeeded: the
	// statuses for asking at the wrong time are decided here, the same on every platform
	// and ROCm release (hiprtc's own differ between releases).
	exprs           []string
	tried, compiled bool
	// What the names' own resolution (names.go) compiles again: the program as created,
	// and the last compile's architecture ("" when the options name it) and options.
	source, name string
	headers      []hipsys.Header
	arch         string
	options      []string
	lowered      map[string]string // resolved names, filled once a cast needs them
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
	p.programs.m[hipsys.Program(h)] = &program{h: h, refused: refused, source: source, name: progName,
		headers: append([]hipsys.Header(nil), headers...)}
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
	pr.tried, pr.compiled, pr.lowered = true, false, nil
	if pr.refused != "" {
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorCompilation, pr.refused)
	}
	if err := p.lib.compile(pr.h, arch, options); err != nil {
		return err
	}
	pr.compiled, pr.arch, pr.options = true, arch, append([]string(nil), options...)
	return nil
}

// RTCAddNameExpression is hiprtcAddNameExpression, before the program compiles.
func (p *Platform) RTCAddNameExpression(prog hipsys.Program, expr string) error {
	const call = "hiprtcAddNameExpression"
	pr := p.programs.lock(prog)
	if pr == nil {
		return badProgram(call)
	}
	defer pr.mu.Unlock()
	switch {
	case strings.TrimSpace(expr) == "" || strings.ContainsRune(expr, 0):
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidInput, "empty name expression")
	case pr.tried:
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorNoNameExpressionsAfterCompile, "the program was compiled")
	case slices.Contains(pr.exprs, expr):
		return nil
	}
	if err := p.lib.addName(pr.h, expr); err != nil {
		return err
	}
	pr.exprs = append(pr.exprs, expr)
	return nil
}

// RTCGetLoweredName is hiprtcGetLoweredName after a successful compile, for an
// expression added before it. Where hiprtc resolves no name for an expression that
// compiled (ROCm 5.2's matches a kernel's demangled name against the expression, so a
// cast picking one overload of several finds none), the platform finds it itself
// (resolveNames).
func (p *Platform) RTCGetLoweredName(prog hipsys.Program, expr string) (string, error) {
	const call = "hiprtcGetLoweredName"
	pr := p.programs.lock(prog)
	if pr == nil {
		return "", badProgram(call)
	}
	defer pr.mu.Unlock()
	switch {
	case !pr.compiled:
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorNoLoweredNamesBeforeCompile, "the program is not compiled")
	case !slices.Contains(pr.exprs, expr):
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorNameExpressionNotValid,
			"name expression "+strconv.Quote(expr)+" was not added before the compile")
	}
	if got, ok := pr.lowered[expr]; ok {
		return got, nil
	}
	got, err := p.lib.loweredName(pr.h, expr)
	if err == nil || !errors.Is(err, hipsys.RTCErrorNameExpressionNotValid) {
		return got, err
	}
	if rerr := p.lib.resolveNames(pr); rerr != nil {
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorNameExpressionNotValid,
			strconv.Quote(expr)+": hiprtc resolved no name, and cubehip could not either: "+rerr.Error())
	}
	if got, ok := pr.lowered[expr]; ok {
		return got, nil
	}
	return "", err
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
