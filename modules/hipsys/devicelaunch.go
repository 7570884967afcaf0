package hipsys

import (
	"strconv"
	"strings"
)

// DeviceLaunchLog is the compile log of a program that launches a kernel from device
// code (`child<<<grid, block>>>(...)` inside a kernel or a __device__ function), "" for
// a program that does not. Such a launch is CUDA's dynamic parallelism, which HIP does
// not have: ROCm's compiler rejects it with messages about missing launch functions,
// g++ with a syntax error, and NVRTC accepts it only with relocatable device code and a
// device runtime library linked in, which no platform here links. Each platform's
// hiprtcCompileProgram refuses such a program before its compiler runs, with this log
// (RTCErrorCompilation), so the answer is the same everywhere and says what the
// construct is. A program for the runtime compiler is device code throughout, so any
// launch in it, also through a macro, counts; `operator<<<` (an explicit template
// argument of operator<<) is not a launch.
//
// name is the program's name for the log's locations; headers are the program's
// in-memory headers, searched too. It does not block and is safe for concurrent use.
func DeviceLaunchLog(source, name string, headers []Header) string {
	if l := deviceLaunchIn(source, name); l != "" {
		return l
	}
	for _, h := range headers {
		if l := deviceLaunchIn(h.Source, h.Name); l != "" {
			return l
		}
	}
	return ""
}

// deviceLaunchIn reports the first kernel launch in src, a file called name.
func deviceLaunchIn(src, name string) string {
	if !strings.Contains(src, "<<<") {
		return ""
	}
	prev := "" // the last word before the position, for operator<<< and the callee's name
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(src)
			}
		case c == '"' || c == '\'':
			i = skipLiteral(src, i)
			prev = ""
		case isWordByte(c):
			j := i
			// A number's digit separators (1'000) and exponents stay in its word.
			for j < len(src) && (isWordByte(src[j]) || c >= '0' && c <= '9' && (src[j] == '\'' || src[j] == '.')) {
				j++
			}
			prev = src[i:j]
			i = j
		case strings.HasPrefix(src[i:], "<<<"):
			if prev != "operator" && strings.Contains(src[i+3:], ">>>") {
				line := 1 + strings.Count(src[:i], "\n")
				what := "a kernel launch"
				if prev != "" && !(prev[0] >= '0' && prev[0] <= '9') {
					what = "a launch of kernel '" + prev + "'"
				}
				return name + ":" + strconv.Itoa(line) + ": error: " + what + " (<<<...>>>) in device code: " +
					"dynamic parallelism is not part of HIP, whose kernels are launched from the host only; " +
					"launch it from the host after this kernel, or call its work as a __device__ function"
			}
			i += 3
			prev = ""
		default:
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				prev = ""
			}
			i++
		}
	}
	return ""
}

// skipLiteral returns the index past the string or character literal starting at
// src[i] (a raw string R"d(...)d" when the quote follows an R).
func skipLiteral(src string, i int) int {
	q := src[i]
	if q == '"' && i > 0 && src[i-1] == 'R' {
		if open := strings.IndexByte(src[i:], '('); open >= 0 {
			delim := ")" + src[i+1:i+open] + `"`
			if end := strings.Index(src[i+open:], delim); end >= 0 {
				return i + open + end + len(delim)
			}
		}
		return len(src)
	}
	j := i + 1
	for j < len(src) && src[j] != q && src[j] != '\n' {
		if src[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(src))
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
