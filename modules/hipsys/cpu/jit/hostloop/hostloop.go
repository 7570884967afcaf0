// Package hostloop builds the plain C++ loops that the cpu device's kernels are
// benchmarked against: the loop a programmer would write for the work a kernel does,
// compiled by the kernels' compiler with the kernels' code generation flags
// (jit.HostCommand), and run in the same process on the same data. Only the benchmarks
// import it (cubehip bench, and this package's test), so the library that hosts link
// (libcubehip.so) carries none of it.
package hostloop

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*cubehip_host_loop)(void*, void*, void*, int64_t, int64_t);
static void cubehip_call_host_loop(void* fn, void* a, void* b, void* c, int64_t n, int64_t m) {
	((cubehip_host_loop)fn)(a, b, c, n, m);
}

// hostloop_open loads path for the life of the process and returns name's address in
// it, or NULL with dlerror's message in msg.
static void* hostloop_open(const char* path, const char* name, char* msg, int cap) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		strncpy(msg, e ? e : "dlopen failed", cap - 1);
		msg[cap - 1] = 0;
		return NULL;
	}
	void* fn = dlsym(h, name);
	if (fn == NULL) {
		strncpy(msg, "no function of that name", cap - 1);
		msg[cap - 1] = 0;
	}
	return fn;
}
*/
import "C"

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// HostLoop is a plain C++ function built at -O2 with the kernels' code generation flags.
// Its signature is fixed:
//
//	extern "C" void name(void* a, void* b, void* c, int64_t n, int64_t m);
type HostLoop struct{ fn unsafe.Pointer }

// Compile compiles source (C++, with <stdint.h> and <string.h> available) and returns
// its function name. The object stays loaded for the life of the process.
func Compile(source, name string) (*HostLoop, error) {
	argv, err := jit.HostCommand("-O2")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cubehip-hostloop-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "loop.cpp")
	text := "#include <stdint.h>\n#include <string.h>\n" + source
	if err := os.WriteFile(src, []byte(text), 0o600); err != nil {
		return nil, err
	}
	obj := filepath.Join(dir, "loop.so")
	args := append(argv[1:], "-fvisibility=default", "-o", obj, src)
	if out, err := exec.Command(argv[0], args...).CombinedOutput(); err != nil {
		return nil, errors.New("compiling the host loop: " + firstLines(string(out), 12))
	}
	cpath, cname := C.CString(obj), C.CString(name)
	defer C.free(unsafe.Pointer(cpath))
	defer C.free(unsafe.Pointer(cname))
	var msg [512]C.char
	// SAFETY: the strings and msg outlive the call; dlopen copies the path.
	fn := C.hostloop_open(cpath, cname, &msg[0], C.int(len(msg)))
	if fn == nil {
		return nil, errors.New("the host loop " + name + ": " + C.GoString(&msg[0]))
	}
	return &HostLoop{fn: fn}, nil
}

// Run calls the loop on the calling thread. a, b and c point to memory that holds no Go
// pointers (the data of numeric slices), or are nil.
func (h *HostLoop) Run(a, b, c unsafe.Pointer, n, m int64) {
	// SAFETY: the pointed-to memory holds no Go pointers and the loop keeps none of them.
	C.cubehip_call_host_loop(h.fn, a, b, c, C.int64_t(n), C.int64_t(m))
}

// firstLines is the compiler's output cut to its first n lines, enough to say what
// failed.
func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
