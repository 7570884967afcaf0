package cpu

import (
	"errors"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// program is a hiprtc program: its source until compiled, then its image and log. mu
// serializes compiles of one program; different programs compile in parallel.
type program struct {
	mu       sync.Mutex
	source   string
	name     string
	headers  []hipsys.Header
	image    []byte
	log      string
	compiled bool
}

// RTCCreateProgram keeps the source and in-memory headers for a later compile. An
// empty source is HIPRTC_ERROR_INVALID_INPUT.
func (p *Platform) RTCCreateProgram(source, progName string, headers []hipsys.Header) (hipsys.Program, error) {
	if source == "" {
		return 0, hipsys.NewRTCError(name, "hiprtcCreateProgram", hipsys.RTCErrorInvalidInput, "empty source")
	}
	if progName == "" {
		progName = "default_program" // hiprtc's name for an unnamed program
	}
	pr := &program{source: source, name: progName, headers: append([]hipsys.Header(nil), headers...)}
	return hipsys.Program(p.programs.add(pr)), nil
}

func (p *Platform) program(call string, h hipsys.Program) (*program, error) {
	if pr := p.programs.get(uintptr(h)); pr != nil {
		return pr, nil
	}
	return nil, hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidProgram, "unknown or destroyed program")
}

// RTCCompileProgram compiles the program with the system C++ compiler (package jit),
// blocking until done. On failure the error is HIPRTC_ERROR_COMPILATION (or the step
// that failed) with the compiler's log as its Detail; the log is also kept for
// RTCGetProgramLog.
func (p *Platform) RTCCompileProgram(h hipsys.Program, options []string) error {
	const call = "hiprtcCompileProgram"
	pr, err := p.program(call, h)
	if err != nil {
		return err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	image, log, err := p.compiler.Compile(pr.source, pr.name, pr.headers, options)
	pr.log = log
	if err != nil {
		pr.image, pr.compiled = nil, false
		var he *hipsys.Error
		if errors.As(err, &he) && he.RTCStatus != hipsys.RTCSuccess {
			if he.Detail == "" && log != "" {
				copied := *he
				copied.Detail = log
				return &copied
			}
			return he
		}
		detail := log
		if detail == "" {
			detail = err.Error()
		}
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorCompilation, detail)
	}
	pr.image, pr.compiled = image, true
	return nil
}

// RTCGetProgramLog is the last compile's log ("" before any compile).
func (p *Platform) RTCGetProgramLog(h hipsys.Program) (string, error) {
	pr, err := p.program("hiprtcGetProgramLog", h)
	if err != nil {
		return "", err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.log, nil
}

// RTCGetCode is the compiled image, for ModuleLoadData; the slice is the caller's.
// Before a successful compile it is HIPRTC_ERROR_INVALID_INPUT.
func (p *Platform) RTCGetCode(h hipsys.Program) ([]byte, error) {
	const call = "hiprtcGetCode"
	pr, err := p.program(call, h)
	if err != nil {
		return nil, err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.compiled {
		return nil, hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidInput, "program not compiled")
	}
	return append([]byte(nil), pr.image...), nil
}

// RTCDestroyProgram forgets the program.
func (p *Platform) RTCDestroyProgram(h hipsys.Program) error {
	if p.programs.remove(uintptr(h)) == nil {
		return hipsys.NewRTCError(name, "hiprtcDestroyProgram", hipsys.RTCErrorInvalidProgram, "unknown or destroyed program")
	}
	return nil
}

var _ hipsys.CodeIdentifier = (*Platform)(nil)

// CodeIdentity is the jit's (jit.Compiler.CodeIdentity): the prelude, the C++ compiler
// and its version, $CUBEHIP_CPU_CXXFLAGS, the warp width, the host CPU and options, as
// one hash.
func (p *Platform) CodeIdentity(options []string) (string, error) {
	return p.compiler.CodeIdentity(options)
}
