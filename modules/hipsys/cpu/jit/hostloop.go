package jit

/*
#include <stdint.h>
typedef void (*cubehip_host_loop)(void*, void*, void*, int64_t, int64_t);
static void cubehip_call_host_loop(void* fn, void* a, void* b, void* c, int64_t n, int64_t m) {
	((cubehip_host_loop)fn)(a, b, c, n, m);
}
*/
import "C"

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"unsafe"
)

// HostLoop is a plain C++ function built by the kernels' compiler with the kernels' code
// generation flags at -O2: the loop a programmer would write for the work a kernel does,
// which benchmarks hold the cpu device's kernels to, in the same process and on the same
// data. Its signature is fixed:
//
//	extern "C" void name(void* a, void* b, void* c, int64_t n, int64_t m);
type HostLoop struct{ fn unsafe.Pointer }

// CompileHostLoop compiles source (C++, with <stdint.h> and <string.h> available) and
// returns its function name. The object stays loaded for the life of the process.
func CompileHostLoop(source, name string) (*HostLoop, error) {
	root := workDir(DefaultCacheDir())
	tc, err := findToolchain(root)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(root, ".hostloop-*")
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
	args := append(append(append([]string{}, tc.argv[1:]...), baseFlags("-O2")...), extraFlags()...)
	args = append(args, "-fvisibility=default", "-o", obj, src)
	if out, err := exec.Command(tc.argv[0], args...).CombinedOutput(); err != nil {
		return nil, errors.New("compiling the host loop: " + firstLines(string(out), 12))
	}
	h, why := openObject(obj)
	if h == nil {
		return nil, errors.New("loading the host loop: " + why)
	}
	fn := lookup(h, name)
	if fn == nil {
		return nil, errors.New("the host loop has no function " + name)
	}
	return &HostLoop{fn: fn}, nil
}

// Run calls the loop on the calling thread. a, b and c point to memory that holds no Go
// pointers (the data of numeric slices), or are nil.
func (h *HostLoop) Run(a, b, c unsafe.Pointer, n, m int64) {
	// SAFETY: the pointed-to memory holds no Go pointers and the loop keeps none of them.
	C.cubehip_call_host_loop(h.fn, a, b, c, C.int64_t(n), C.int64_t(m))
}
