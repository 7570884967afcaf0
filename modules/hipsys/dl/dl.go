// Package dl opens vendor libraries at run time (dlopen) and resolves their symbols by
// name, so that a cubehip build needs only Go and a C compiler and one binary works
// across ROCm and CUDA releases. The nvidia and amd platforms call the resolved symbols
// through their own cgo trampolines: a C function taking the symbol's address as its
// first argument.
package dl

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

static void* cubehip_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char* cubehip_dlerror(void) { const char* e = dlerror(); return e ? e : ""; }
static const char* cubehip_dlpath(void* h) {
	struct link_map* lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL) return "";
	return lm->l_name;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// ErrNotFound is wrapped by the errors of Open and Sym, so callers can tell "not
// installed" apart from "installed but broken".
var ErrNotFound = errors.New("not found")

// Library is an opened shared library.
type Library struct {
	Name string // the name that opened, e.g. "libcuda.so.1"
	h    unsafe.Pointer
}

// LibraryError says which library could not be opened, under which names, and why.
type LibraryError struct {
	Names  []string
	Reason string // dlerror's text for the last name tried
}

func (e *LibraryError) Error() string {
	return fmt.Sprintf("cannot load %s (tried %s): %s", e.Names[0], strings.Join(e.Names, ", "), e.Reason)
}

func (e *LibraryError) Unwrap() error { return ErrNotFound }

// SymbolError says which symbol a library lacks.
type SymbolError struct {
	Library string
	Symbols []string // the names tried, newest first
}

func (e *SymbolError) Error() string {
	return fmt.Sprintf("%s has no symbol %s", e.Library, strings.Join(e.Symbols, " or "))
}

func (e *SymbolError) Unwrap() error { return ErrNotFound }

// dlerror's state is per thread but dlopen and dlerror are separate calls; serializing
// them keeps the reason attached to the right failure.
var mu sync.Mutex

// Open opens the first of names that loads (for example "libamdhip64.so.7",
// "libamdhip64.so.6", ...). The library stays loaded for the life of the process:
// platforms are opened once and their function pointers are kept.
func Open(names ...string) (*Library, error) {
	if len(names) == 0 {
		return nil, errors.New("dl.Open: no library name")
	}
	mu.Lock()
	defer mu.Unlock()
	reason := ""
	for _, n := range names {
		cn := C.CString(n)
		h := C.cubehip_dlopen(cn)
		C.free(unsafe.Pointer(cn))
		if h != nil {
			return &Library{Name: n, h: h}, nil
		}
		reason = C.GoString(C.cubehip_dlerror())
	}
	return nil, &LibraryError{Names: names, Reason: reason}
}

// Sym resolves the first of names the library exports (a renamed symbol is listed newest
// first: "hipGetDevicePropertiesR0600", "hipGetDeviceProperties").
func (l *Library) Sym(names ...string) (unsafe.Pointer, error) {
	for _, n := range names {
		if p := l.Lookup(n); p != nil {
			return p, nil
		}
	}
	return nil, &SymbolError{Library: l.Name, Symbols: names}
}

// Lookup is the symbol's address, or nil when the library does not export it (for
// optional symbols, which a caller handles by name).
func (l *Library) Lookup(name string) unsafe.Pointer {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.dlsym(l.h, cn)
}

// Path is the file the loader opened the library from, as it names it (an absolute path
// when the library was found on the search path), or "" when it cannot say. Two names
// may open one file and one name another file after an upgrade: what a library builds
// (a runtime compiler's code) is keyed on the file, not on the name.
func (l *Library) Path() string {
	mu.Lock()
	defer mu.Unlock()
	return C.GoString(C.cubehip_dlpath(l.h))
}

// Table resolves a set of required symbols at once and reports every missing one in a
// single error, so a wrong library version is diagnosed in one run, not one symbol a
// run. Each entry's Names are tried in order; Addr receives the address.
type Entry struct {
	Names []string
	Addr  *unsafe.Pointer
}

// Resolve fills every entry or returns a SymbolError per missing symbol, joined.
func (l *Library) Resolve(entries []Entry) error {
	var missing []error
	for _, e := range entries {
		p, err := l.Sym(e.Names...)
		if err != nil {
			missing = append(missing, err)
			continue
		}
		*e.Addr = p
	}
	return errors.Join(missing...)
}
