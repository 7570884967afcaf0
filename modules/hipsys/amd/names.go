package amd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/internal/lowered"
)

// resolveNames fills pr.lowered with every name expression's lowered name: hiprtc's
// where it has one, else the symbol a second compile finds. ROCm 5.2's hiprtc appends
// `extern "C" constexpr auto __hiprtc_N = EXPR;` to the program and then looks for a
// kernel whose demangled name the expression matches, so a cast choosing one overload of
// several ("(void(*)(float*))fill") compiles and matches nothing. The second compile is
// the program as created plus, for each such expression, a device variable holding its
// address (`__device__ const void* cubehip_name_i = (const void*)(EXPR);`): the code
// object's relocations then name the symbol, as on the cpu device (package lowered).
// The same compiler compiles the same source with the same options, so the symbol is the
// program's own, which is checked. The caller holds pr's lock.
func (l *library) resolveNames(pr *program) error {
	got := map[string]string{}
	var missing []string
	for _, e := range pr.exprs {
		name, err := l.loweredName(pr.h, e)
		switch {
		case err == nil:
			got[e] = name
		case errors.Is(err, hipsys.RTCErrorNameExpressionNotValid):
			missing = append(missing, e)
		default:
			return err
		}
	}
	if len(missing) > 0 {
		names, err := l.probeNames(pr, missing)
		if err != nil {
			return err
		}
		for i, e := range missing {
			got[e] = names[i]
		}
	}
	pr.lowered = got
	return nil
}

// probeNames compiles pr's program with a device variable holding the address of each
// of exprs and reads the symbols they point at.
func (l *library) probeNames(pr *program, exprs []string) ([]string, error) {
	var src strings.Builder
	src.WriteString(pr.source)
	src.WriteString("\n")
	for i, e := range exprs {
		fmt.Fprintf(&src, "__device__ __attribute__((used)) const void* cubehip_name_%d = (const void*)(%s\n);\n", i, e)
	}
	h, err := l.create(src.String(), pr.name, pr.headers)
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.destroy(h) }()
	if err := l.compile(h, pr.arch, pr.options); err != nil {
		return nil, fmt.Errorf("the program with the expressions' addresses did not compile: %w", err)
	}
	arch := pr.arch
	if arch == "" {
		arch = explicitArch(pr.options)
	}
	probe, err := l.codeObject(h, arch)
	if err != nil {
		return nil, err
	}
	own, err := l.codeObject(pr.h, arch)
	if err != nil {
		return nil, err
	}
	names, err := lowered.Resolve(probe.ELF, "cubehip_name_", len(exprs))
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		// A function of the probe is a kernel the program must hold too; a variable
		// (&var) the module finds by name anyway.
		if slices.Contains(probe.Symbols, n) && !slices.Contains(own.Symbols, n) {
			return nil, fmt.Errorf("%s designates %s, which the program's code object lacks", strconv.Quote(exprs[i]), n)
		}
	}
	return names, nil
}

// codeObject is the program's code, parsed for arch.
func (l *library) codeObject(h uintptr, arch string) (*CodeObject, error) {
	code, err := l.code(h)
	if err != nil {
		return nil, err
	}
	return ParseCodeObject(code, arch)
}
