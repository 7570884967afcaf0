package jit

/*
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "runner.h"
*/
import "C"

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const (
	callLoad        = "hipModuleLoadData"
	callGetFunction = "hipModuleGetFunction"
	callUnload      = "hipModuleUnload"
)

// Module is a loaded code object. Its functions may be launched from any number of
// goroutines at once; Close waits for launches in flight, then unloads it.
type Module struct {
	handle  unsafe.Pointer // dlopen handle
	barrier bool
	// staticShared is the bytes of shared memory the module's static __shared__
	// variables take in a block (cubehip_shared_layout, cubehip_shared.h).
	staticShared uint64
	entries      map[string]string // kernel name -> its launcher's suffix (cubehip_run_<suffix>)
	// unwrapped are the lowered names of name expressions that designate no kernel the jit
	// wrapped (a kernel defined in a header or by a macro, a __device__ function or variable).
	unwrapped map[string]bool
	globals   map[string]symbol // the object's variables, by symbol name
	base      uintptr           // the address the object was loaded at: a symbol's is base+value

	users  atomic.Int64 // launches in flight
	closed atomic.Bool

	// A checked module (check.go): its checks, the lock its launches take one at a time,
	// and its object, whose line table (read at the first report) names a report's line.
	checks    hipsys.Checks
	checkMu   sync.Mutex
	object    []byte
	linesOnce sync.Once
	lines     []lineRow

	mu    sync.Mutex
	funcs map[string]*Function
}

// Load loads a code object that Compile produced: the shared object inside it is written
// once (by content hash) in the jit's private directory under DefaultCacheDir and
// dlopen'ed. Loading the same image twice shares one copy of its globals (__device__
// variables): the dynamic loader opens a file once per process. Errors: hipErrorInvalidImage for bytes that are not a cpu code object
// or whose object does not load on this host.
func Load(image []byte) (*Module, error) {
	im, err := decodeImage(image)
	if err != nil {
		return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorInvalidImage, err.Error())
	}
	if im.flags&flagShadow != 0 && !shadowReady() {
		// Its every access reads the shadow: without one it would fault at once.
		return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorInvalidImage,
			"a module compiled for the checker's inline shadow, which this process has not: "+shadow.err.Error()+
				"; compile the kernel again in this process")
	}
	sum := sha256.Sum256(im.object)
	path := filepath.Join(workDir(DefaultCacheDir()), "so", hex.EncodeToString(sum[:16])+".so")
	// A file already there is used only if it holds these very bytes: the cache is a
	// directory other processes write to, and a short or stale file must not be loaded.
	if old := readCached(path); !bytes.Equal(old, im.object) {
		if err := writeAtomic(path, im.object); err != nil {
			return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorOperatingSystem, "writing the kernel object: "+err.Error())
		}
		grewCache(DefaultCacheDir(), int64(len(im.object)))
	} else {
		touch(path) // recently used: eviction by the size cap leaves it alone while it is opened
	}
	h, why := openObject(path)
	if h == nil {
		return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorInvalidImage, why)
	}
	m := &Module{handle: h, barrier: im.flags&flagBarrier != 0, entries: map[string]string{}, unwrapped: map[string]bool{}, funcs: map[string]*Function{}}
	if m.checks = hipsys.Checks(im.flags >> flagChecksShift); m.checks != 0 {
		m.object = im.object
	}
	abi := m.sym("cubehip_abi_version")
	if abi == nil || C.cubehip_call_abi(abi) != C.CUBEHIP_ABI_VERSION {
		C.cubehip_dlclose(h)
		return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorInvalidImage, "code object built for another cubehip ABI")
	}
	var static C.uint64_t
	layout := m.sym("cubehip_shared_layout")
	// SAFETY: static outlives the call and holds no pointer.
	if layout == nil || C.cubehip_call_layout(layout, &static) != 0 {
		C.cubehip_dlclose(h)
		return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorInvalidImage, "code object declares more static __shared__ variables than the jit can lay out")
	}
	m.staticShared = uint64(static)
	for _, e := range im.entries {
		m.entries[e] = e
	}
	for _, n := range im.names {
		if _, ok := m.entries[n.lowered]; ok {
			continue // an extern "C" entry's own name, or two expressions for one kernel
		}
		if n.launcher == "" {
			m.unwrapped[n.lowered] = true
			continue
		}
		m.entries[n.lowered] = n.launcher
	}
	globals, anchor, ok := objectSymbols(im.object, "cubehip_abi_version")
	if !ok {
		C.cubehip_dlclose(h)
		return nil, hipsys.NewError("cpu", callLoad, hipsys.ErrorInvalidImage, "code object has no readable symbol table")
	}
	m.globals, m.base = globals, uintptr(abi)-uintptr(anchor)
	return m, nil
}

func (m *Module) sym(name string) unsafe.Pointer { return lookup(m.handle, name) }

// openObject dlopens a shared object (RTLD_NOW | RTLD_LOCAL: every symbol resolved now,
// so a broken object fails here and not in the middle of a launch; none leaks into the
// global namespace, where two modules' kernels of the same name would collide). It
// returns nil and dlerror's text on failure.
func openObject(path string) (unsafe.Pointer, string) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	// SAFETY: cpath and msg outlive the call; dlopen copies the path.
	h := C.cubehip_dlopen(cpath, &msg[0], C.int(len(msg)))
	if h == nil {
		return nil, C.GoString(&msg[0])
	}
	return h, ""
}

func lookup(h unsafe.Pointer, name string) unsafe.Pointer {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.cubehip_dlsym(h, cn)
}

// Function looks up a kernel by name: an extern "C" __global__ entry by its own, or a
// kernel a name expression of the program designated by its lowered name (CompileNamed).
// The same *Function is returned for every lookup of a name. Errors: hipErrorNotFound for
// a name the module does not define, hipErrorInvalidHandle after Close.
func (m *Module) Function(name string) (*Function, error) {
	if m == nil {
		return nil, hipsys.NewError("cpu", callGetFunction, hipsys.ErrorInvalidHandle, "nil module")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil, hipsys.NewError("cpu", callGetFunction, hipsys.ErrorInvalidHandle, "module is unloaded")
	}
	if f, ok := m.funcs[name]; ok {
		return f, nil
	}
	notFound := hipsys.NewError("cpu", callGetFunction, hipsys.ErrorNotFound, "no kernel named "+name+
		` (the entry points are extern "C" __global__ functions, by their names, and the kernels the program's name expressions designate, by their lowered names)`)
	if m.unwrapped[name] {
		return nil, hipsys.NewError("cpu", callGetFunction, hipsys.ErrorNotFound, name+" is what a name expression designates, "+
			"but no __global__ definition in the program's source that the cpu device runs as a kernel (one in a header or a macro, or no kernel at all)")
	}
	suffix, ok := m.entries[name]
	if !ok {
		return nil, notFound
	}
	run, sig := m.sym("cubehip_run_"+suffix), m.sym("cubehip_sig_"+suffix)
	if run == nil || sig == nil {
		return nil, notFound
	}
	var desc [C.CUBEHIP_MAX_ARGS]C.cubehip_param
	// SAFETY: desc is a local array the callee fills up to its length and does not keep.
	n := int(C.cubehip_call_sig(sig, &desc[0], C.CUBEHIP_MAX_ARGS))
	if n > len(desc) {
		return nil, hipsys.NewError("cpu", callGetFunction, hipsys.ErrorInvalidDeviceFunction, "kernel "+name+" takes more arguments than HIP allows")
	}
	f := &Function{m: m, name: name, run: run, sizes: make([]uint32, n), params: layoutParams(desc[:n])}
	for i := range f.sizes {
		f.sizes[i] = uint32(desc[i].size)
	}
	m.funcs[name] = f
	return f, nil
}

// layoutParams places each parameter as the C++ ABI lays out a kernel's parameter block
// (HIP's kernarg segment, CUDA's parameter space): at the next multiple of its alignment
// after the one before, so an int followed by a double puts the double at 8, not 4.
func layoutParams(desc []C.cubehip_param) []hipsys.KernelParam {
	ps := make([]hipsys.KernelParam, len(desc))
	off := uint32(0)
	for i, d := range desc {
		align := max(uint32(d.align), 1)
		off = (off + align - 1) / align * align
		kind := hipsys.ParamValue
		if d.pointer != 0 {
			kind = hipsys.ParamPointer
		}
		ps[i] = hipsys.KernelParam{Offset: off, Size: uint32(d.size), Kind: kind}
		off += uint32(d.size)
	}
	return ps
}

// Close unloads the module after the launches in flight on it return. Later calls on it
// or its functions fail with hipErrorInvalidHandle; a second Close does too.
func (m *Module) Close() error {
	if m == nil || m.closed.Swap(true) {
		return hipsys.NewError("cpu", callUnload, hipsys.ErrorInvalidHandle, "module is already unloaded")
	}
	// A launch that raced with closed sees it and backs out; one that got in first is
	// waited for, since unloading would pull its code out from under it.
	for m.users.Load() != 0 {
		runtime.Gosched()
		time.Sleep(10 * time.Microsecond)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if C.cubehip_dlclose(m.handle) != 0 {
		return hipsys.NewError("cpu", callUnload, hipsys.ErrorUnknown, "dlclose failed")
	}
	return nil
}
