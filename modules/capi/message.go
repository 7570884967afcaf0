package main

import (
	"regexp"
	"runtime"
	"strings"
)

// The C ABI forwards the Device's errors, which are written for Go callers: Go's type
// names, the Go field names of DeviceProps and Kernel, a package prefix, an operation's
// Go name. cMessage puts them in the C API's terms, and gives every message one prefix
// style: the name of the C function that failed, then what was wrong.
var (
	goTerms = strings.NewReplacer(
		"(MaxGridSize)", "(the grid limit, max_grid_size)",
		"(MaxThreadsDim)", "(the block limit, max_threads_dim)",
		"(MaxThreadsPerBlock)", "(the block limit, max_threads_per_block)",
		"(its IO)", "(the buffers' access, desc.access)",
		"give IO for", "give desc.access for",
		// A typed buffer refused for a pointer to another type: Go's remedy is the
		// buffer's Arg; C's is a buffer allocated without a type.
		"pass b.Arg() to pass its bytes as they are", "allocate it untyped (cubehip_buffer_alloc) to pass its bytes as they are",
		"pass v.Arg() to pass its bytes as they are", "allocate it untyped (cubehip_buffer_alloc) to pass its bytes as they are",
	)
	// A Go package's prefix ("server: ", "stream: ", "memory: ") at the start of a
	// message, of a wrapped part or of a parenthesis, and only there: "stream: " also
	// ends the names of C functions (cubehip_device_export_stream: ...) and of things.
	goPackage = regexp.MustCompile(`(^|: |\()(?:server|stream|memory): `)
	// A scalar's Go type where the Device names what a launch was given.
	goScalar = regexp.MustCompile(`\b(u?int(?:8|16|32|64)|float32|float64) given`)
	cScalar  = map[string]string{
		"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
		"int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t",
		"float32": "float", "float64": "double",
	}
	// The Device's name for a launch's step, at the start of what it says.
	goLaunch = regexp.MustCompile(`^launch ([A-Za-z_][A-Za-z_0-9]*): `)
)

func cMessage(msg string) string {
	msg = goTerms.Replace(msg)
	for {
		next := goPackage.ReplaceAllString(msg, "$1")
		if next == msg {
			break
		}
		msg = next
	}
	msg = goScalar.ReplaceAllStringFunc(msg, func(s string) string {
		t := strings.TrimSuffix(s, " given")
		return cScalar[t] + " given"
	})
	msg = goLaunch.ReplaceAllString(msg, "kernel $1: ")
	if strings.HasPrefix(msg, "cubehip_") {
		return msg
	}
	if fn := exportName(); fn != "" {
		return fn + ": " + msg
	}
	return msg
}

// exportName is the exported C function on the calling goroutine's stack: failures are
// rare, so the message's prefix is found here rather than passed by every call site.
func exportName() string {
	var pcs [32]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
	for {
		f, more := frames.Next()
		if i := strings.LastIndex(f.Function, ".cubehip_"); i >= 0 {
			return f.Function[i+1:]
		}
		if !more {
			return ""
		}
	}
}
