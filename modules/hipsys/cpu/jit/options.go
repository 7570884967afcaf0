package jit

import (
	"path/filepath"
	"strings"
)

// compilerFlags turns hiprtc options into the host compiler's. Honoured: -D, -U, -I (made
// absolute, since the compiler runs in a scratch directory), -O*, -std/--std of C++17 or
// later, -ffast-math and -w. Everything else is a GPU code-generation option
// (--offload-arch, -fgpu-rdc, --gpu-architecture, -mcumode, ...) with no meaning for the
// host, and is dropped rather than rejected, so one option list serves every platform.
func compilerFlags(options []string) (opt string, flags []string) {
	opt = "-O3"
	for i := 0; i < len(options); i++ {
		o := strings.TrimSpace(options[i])
		switch {
		case o == "-D" || o == "-U" || o == "-I":
			if i+1 < len(options) {
				i++
				flags = append(flags, valueFlag(o, options[i])...)
			}
		case strings.HasPrefix(o, "-D") || strings.HasPrefix(o, "-U") || strings.HasPrefix(o, "-I"):
			flags = append(flags, valueFlag(o[:2], o[2:])...)
		case strings.HasPrefix(o, "--define-macro="):
			flags = append(flags, "-D"+strings.TrimPrefix(o, "--define-macro="))
		case strings.HasPrefix(o, "--include-path="):
			flags = append(flags, valueFlag("-I", strings.TrimPrefix(o, "--include-path="))...)
		case o == "-O0" || o == "-O1" || o == "-O2" || o == "-O3" || o == "-Os" || o == "-O":
			opt = o
		case strings.HasPrefix(o, "-std=") || strings.HasPrefix(o, "--std="):
			if std := o[strings.Index(o, "=")+1:]; modernStd(std) {
				flags = append(flags, "-std="+std)
			}
		case o == "-ffast-math" || o == "--use_fast_math" || o == "-use_fast_math":
			flags = append(flags, "-ffast-math")
		case o == "-w":
			flags = append(flags, o)
		}
	}
	return opt, flags
}

func valueFlag(flag, v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if flag == "-I" {
		if abs, err := filepath.Abs(v); err == nil {
			v = abs
		}
	}
	return []string{flag + v}
}

// modernStd accepts the standards the prelude compiles under (it needs C++17).
func modernStd(s string) bool {
	for _, p := range []string{"c++", "gnu++"} {
		if v, ok := strings.CutPrefix(s, p); ok {
			switch v {
			case "17", "1z", "20", "2a", "23", "2b", "26", "2c":
				return true
			}
		}
	}
	return false
}
