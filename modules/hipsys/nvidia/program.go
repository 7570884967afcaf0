package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// program is an NVRTC program and what its compile chose to build.
type program struct {
	mu       sync.Mutex
	compiled bool
	cubin    bool // RTCGetCode returns CUBIN (else PTX)
	// The name expressions given to NVRTC, and whether a compile ran: the statuses for
	// asking at the wrong time are decided here, as on the other platforms.
	exprs map[string]bool
	tried bool
	// refused is the log of a program that launches a kernel from device code
	// (hipsys.DeviceLaunchLog): its compile fails with it, before NVRTC runs, though
	// NVRTC could build it with relocatable code and the device runtime, which HIP has
	// no counterpart of.
	refused string
}

func (p *Platform) program(call string, h hipsys.Program) (*program, error) {
	if pr, ok := p.programs.get(uintptr(h)); ok {
		return pr, nil
	}
	return nil, hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInvalidProgram, fmt.Sprintf("program %#x", uintptr(h)))
}

// RTCCreateProgram creates an NVRTC program from HIP source. The in-memory HIP headers
// (hip/hip_runtime.h, hip/hip_fp16.h, ...) are added after the caller's, which win on a
// name clash. NVRTC is loaded by the first call; its absence is
// HIPRTC_ERROR_PROGRAM_CREATION_FAILURE naming the libraries tried.
func (p *Platform) RTCCreateProgram(source, name string, headers []hipsys.Header) (hipsys.Program, error) {
	const call = "hiprtcCreateProgram"
	if _, err := p.loadNVRTC(); err != nil {
		return 0, hipsys.NewRTCError(platformName, call, hipsys.RTCErrorProgramCreationFailure, err.Error())
	}
	if name == "" {
		name = "kernel.hip"
	}
	all := programHeaders(headers)
	srcs := make([]string, len(all))
	names := make([]string, len(all))
	for i, h := range all {
		srcs[i], names[i] = h.Source, h.Name
	}
	csrcs, freeSrcs := cStrings(srcs)
	defer freeSrcs()
	cnames, freeNames := cStrings(names)
	defer freeNames()
	csource, cname := C.CString(source), C.CString(name)
	defer C.free(unsafe.Pointer(csource))
	defer C.free(unsafe.Pointer(cname))
	var h C.uintptr_t
	if err := nvrtcError(call, int32(C.nv_create(&h, csource, cname, C.int(len(all)), csrcs, cnames)), ""); err != nil {
		return 0, err
	}
	p.programs.put(uintptr(h), &program{refused: hipsys.DeviceLaunchLog(source, name, headers)})
	return hipsys.Program(h), nil
}

// RTCCompileProgram compiles for the calling thread's current device: CUBIN for its
// own SM, or PTX when NVRTC is older than the device (archOption). A failed compile is
// HIPRTC_ERROR_COMPILATION with NVRTC's log in the error's Detail; a program that
// launches a kernel from device code fails so without running NVRTC
// (hipsys.DeviceLaunchLog).
func (p *Platform) RTCCompileProgram(h hipsys.Program, options []string) error {
	const call = "hiprtcCompileProgram"
	pr, err := p.program(call, h)
	if err != nil {
		return err
	}
	nv, _ := p.loadNVRTC() // loaded by RTCCreateProgram, or no program would exist
	props, err := p.GetDeviceProperties(currentDevice())
	if err != nil {
		return hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInternalError, err.Error())
	}
	opts, cubin := compileOptions(options, props.Major*10+props.Minor, nv)
	copts, freeOpts := cStrings(opts)
	defer freeOpts()

	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.tried, pr.compiled = true, false
	if pr.refused != "" {
		return hipsys.NewRTCError(platformName, call, hipsys.RTCErrorCompilation, pr.refused)
	}
	if r := int32(C.nv_compile(C.uintptr_t(h), C.int(len(opts)), copts)); r != 0 {
		log, _ := p.programLog(h)
		return nvrtcError(call, r, strings.TrimSpace(log))
	}
	pr.compiled, pr.cubin = true, cubin
	return nil
}

// compileOptions is the full NVRTC option list and whether it builds CUBIN.
func compileOptions(user []string, cc int, nv *nvrtcLib) ([]string, bool) {
	opts := translateOptions(user)
	cubin := true
	if hasArch(opts) {
		for _, o := range opts {
			if strings.Contains(o, "compute_") {
				cubin = false
			}
		}
	} else {
		var arch string
		arch, cubin = archOption(cc, nv.archs)
		opts = append(opts, arch)
	}
	for _, d := range nv.includes {
		opts = append(opts, "-I"+d)
	}
	return opts, cubin
}

// RTCAddNameExpression is nvrtcAddNameExpression, before the program compiles: NVRTC
// instantiates what expr names and reports its mangled name (RTCGetLoweredName).
func (p *Platform) RTCAddNameExpression(h hipsys.Program, expr string) error {
	const call = "hiprtcAddNameExpression"
	pr, err := p.program(call, h)
	if err != nil {
		return err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	switch {
	case strings.TrimSpace(expr) == "" || strings.ContainsRune(expr, 0):
		return hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInvalidInput, "empty name expression")
	case pr.tried:
		return hipsys.NewRTCError(platformName, call, hipsys.RTCErrorNoNameExpressionsAfterCompile, "the program was compiled")
	case pr.exprs[expr]:
		return nil
	case C.cubehip_nvrtc.addNameExpression == nil:
		return hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInternalError, "NVRTC has no nvrtcAddNameExpression")
	}
	cexpr := C.CString(expr)
	defer C.free(unsafe.Pointer(cexpr))
	// SAFETY: cexpr is C memory freed after the call; NVRTC copies it.
	if err := nvrtcError(call, int32(C.nv_add_name(C.uintptr_t(h), cexpr)), expr); err != nil {
		return err
	}
	if pr.exprs == nil {
		pr.exprs = map[string]bool{}
	}
	pr.exprs[expr] = true
	return nil
}

// RTCGetLoweredName is nvrtcGetLoweredName after a successful compile, for an
// expression added before it: the name ModuleGetFunction takes.
func (p *Platform) RTCGetLoweredName(h hipsys.Program, expr string) (string, error) {
	const call = "hiprtcGetLoweredName"
	pr, err := p.program(call, h)
	if err != nil {
		return "", err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	switch {
	case !pr.compiled:
		return "", hipsys.NewRTCError(platformName, call, hipsys.RTCErrorNoLoweredNamesBeforeCompile, "the program is not compiled")
	case !pr.exprs[expr]:
		return "", hipsys.NewRTCError(platformName, call, hipsys.RTCErrorNameExpressionNotValid,
			"name expression "+strconv.Quote(expr)+" was not added before the compile")
	case C.cubehip_nvrtc.getLoweredName == nil:
		return "", hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInternalError, "NVRTC has no nvrtcGetLoweredName")
	}
	cexpr := C.CString(expr)
	defer C.free(unsafe.Pointer(cexpr))
	var out *C.char
	// SAFETY: cexpr is C memory freed after the call; out points into the program, which
	// pr's lock keeps from being destroyed while it is copied.
	if err := nvrtcError(call, int32(C.nv_lowered(C.uintptr_t(h), cexpr, &out)), expr); err != nil {
		return "", err
	}
	if out == nil {
		return "", hipsys.NewRTCError(platformName, call, hipsys.RTCErrorNameExpressionNotValid, expr+": NVRTC gave no name")
	}
	return C.GoString(out), nil
}

// RTCGetProgramLog is the compile log (warnings too), empty when there was nothing to say.
func (p *Platform) RTCGetProgramLog(h hipsys.Program) (string, error) {
	pr, err := p.program("hiprtcGetProgramLog", h)
	if err != nil {
		return "", err
	}
	if pr.refused != "" {
		return pr.refused, nil
	}
	return p.programLog(h)
}

func (p *Platform) programLog(h hipsys.Program) (string, error) {
	const call = "hiprtcGetProgramLog"
	var n C.size_t
	if err := nvrtcError(call, int32(C.nv_log_size(C.uintptr_t(h), &n)), ""); err != nil {
		return "", err
	}
	if n <= 1 {
		return "", nil
	}
	buf := make([]byte, n)
	// SAFETY: buf is Go memory without pointers, n bytes as NVRTC asked, written during the call.
	if err := nvrtcError(call, int32(C.nv_log(C.uintptr_t(h), (*C.char)(unsafe.Pointer(&buf[0])))), ""); err != nil {
		return "", err
	}
	return strings.TrimRight(string(buf), "\x00"), nil
}

// RTCGetCode is the compiled code, CUBIN or PTX as the compile chose, in the form
// ModuleLoadData takes.
func (p *Platform) RTCGetCode(h hipsys.Program) ([]byte, error) {
	const call = "hiprtcGetCode"
	pr, err := p.program(call, h)
	if err != nil {
		return nil, err
	}
	pr.mu.Lock()
	compiled, cubin := pr.compiled, pr.cubin
	pr.mu.Unlock()
	if !compiled {
		return nil, hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInvalidProgram, "program is not compiled")
	}
	c := C.int(0)
	if cubin {
		c = 1
	}
	var n C.size_t
	if err := nvrtcError(call, int32(C.nv_code_size(C.uintptr_t(h), c, &n)), ""); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInvalidProgram, "no code")
	}
	code := make([]byte, n)
	// SAFETY: code is Go memory without pointers, n bytes as NVRTC asked, written during the call.
	if err := nvrtcError(call, int32(C.nv_code(C.uintptr_t(h), c, (*C.char)(unsafe.Pointer(&code[0])))), ""); err != nil {
		return nil, err
	}
	return code, nil
}

// RTCDestroyProgram frees the program; its handle is invalid at once.
func (p *Platform) RTCDestroyProgram(h hipsys.Program) error {
	const call = "hiprtcDestroyProgram"
	pr, ok := p.programs.take(uintptr(h))
	if !ok {
		return hipsys.NewRTCError(platformName, call, hipsys.RTCErrorInvalidProgram, fmt.Sprintf("program %#x", uintptr(h)))
	}
	// A call in flight on the program (a compile, a lowered name being copied out of it)
	// finishes first.
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return nvrtcError(call, int32(C.nv_destroy(C.uintptr_t(h))), "")
}
