package cpu

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// program is a hiprtc program: its source and name expressions until compiled, then its
// image, log and lowered names. mu serializes compiles of one program; different programs
// compile in parallel.
type program struct {
	mu       sync.Mutex
	source   string
	name     string
	headers  []hipsys.Header
	exprs    []string          // name expressions, in the order first added
	lowered  map[string]string // expression -> lowered name, after a successful compile
	image    []byte
	log      string
	compiled bool
	tried    bool // a compile ran: no more name expressions
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
	pr.tried = true
	image, log, err := p.compiler.CompileNamed(pr.source, pr.name, pr.headers, p.checkedOptions(options), pr.exprs)
	pr.log = log
	if err == nil {
		pr.lowered, err = jit.LoweredNames(image)
	}
	if err != nil {
		pr.image, pr.compiled, pr.lowered = nil, false, nil
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

// RTCAddNameExpression adds a name expression for the compile to resolve with the C++
// compiler's own mangling (jit.Compiler.CompileNamed). Only before the first compile.
func (p *Platform) RTCAddNameExpression(h hipsys.Program, expr string) error {
	const call = "hiprtcAddNameExpression"
	pr, err := p.program(call, h)
	if err != nil {
		return err
	}
	if strings.TrimSpace(expr) == "" || strings.ContainsRune(expr, 0) {
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidInput, "empty name expression")
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.tried {
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorNoNameExpressionsAfterCompile, "the program was compiled")
	}
	if !slices.Contains(pr.exprs, expr) {
		pr.exprs = append(pr.exprs, expr)
	}
	return nil
}

// RTCGetLoweredName is the symbol the compile resolved expr to, the name
// ModuleGetFunction takes for its kernel.
func (p *Platform) RTCGetLoweredName(h hipsys.Program, expr string) (string, error) {
	const call = "hiprtcGetLoweredName"
	pr, err := p.program(call, h)
	if err != nil {
		return "", err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.compiled {
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorNoLoweredNamesBeforeCompile, "the program is not compiled")
	}
	lowered, ok := pr.lowered[expr]
	if !ok {
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorNameExpressionNotValid,
			"name expression "+strconv.Quote(expr)+" was not added before the compile")
	}
	return lowered, nil
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
	return p.compiler.CodeIdentity(p.checkedOptions(options))
}
