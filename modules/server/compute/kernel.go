package compute

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Access is how a kernel uses one buffer argument. The declaration is the kernel's IO:
// the write scopes check the Read and ReadWrite buffers for failures and claim the Write
// and ReadWrite ones, and a launch that cannot run leaves only those carrying its failure.
type Access uint8

const (
	Read      Access = iota + 1 // only read: checked for a carried failure, never failed by this kernel
	Write                       // only written
	ReadWrite                   // read and written in place: checked, and failed with the launch
)

// KernelID identifies a kernel's code: the SHA-256 of its source, entry point and
// compile options. The block shape and shared memory are launch facts, not part of it.
type KernelID [32]byte

func (id KernelID) String() string { return hex.EncodeToString(id[:8]) }

// ModuleID identifies a module: the SHA-256 of a source and the options it is compiled
// with. The kernels of one source and options are one module, compiled once and loaded
// once per server, so that they share its __device__ and __constant__ variables, as
// HIP's hipModuleLoadData and CuPy's RawModule share them; the entry point is not part
// of it.
type ModuleID [32]byte

func (id ModuleID) String() string { return hex.EncodeToString(id[:8]) }

// Kernel is a HIP C++ kernel: source with a `__global__` entry point (an `extern "C"`
// name, or one of Names), the options it is compiled with, its block shape, its dynamic shared memory and the access
// of each of its buffer parameters. Build it once with NewKernel and launch it many
// times; it is immutable and safe to share between goroutines and servers.
type Kernel struct {
	Source    string
	Entry     string
	Options   []string // passed to hiprtc as given (the platform adds its own includes)
	Block     hipsys.Dim3
	SharedMem uint32   // dynamic shared memory bytes per block
	IO        []Access // one per buffer parameter, in order
	// Names are the C++ name expressions the module resolves when it compiles
	// ("reduce<float, 256>", a C++-linkage kernel's name): an Entry among them is found
	// by the symbol the compiler gave it (hipsys.Platform.RTCGetLoweredName), any other
	// as written (an extern "C" kernel). Part of the module's identity: the compile
	// instantiates what they name.
	Names []string
	// Code is the module as code compiled ahead of time (ModuleOfCode, NewCodeKernel),
	// loaded as it is with ModuleLoadData: Source, Options and Names are then unused
	// and nothing is compiled or cached on disk. Such a module has no declaration to
	// read its buffers' access from, so IO must be given when the kernel takes buffers.
	Code []byte

	id  KernelID
	mod ModuleID

	// Cooperative launches every block of the grid at once (hipModuleLaunchCooperativeKernel),
	// for a kernel whose blocks wait for each other (cooperative groups' this_grid().sync()).
	// Such a launch never goes through the launch queue, which issues plain launches only.
	// Not part of the kernel's identity: the code is the same.
	Cooperative bool
}

// NewKernel returns a kernel with its ids computed (once: a launch pays no hashing).
func NewKernel(source, entry string, block hipsys.Dim3, io []Access, options ...string) *Kernel {
	return NewNamedKernel(source, entry, nil, block, io, options...)
}

// NewNamedKernel is NewKernel of a module that resolves the C++ name expressions names
// (Kernel.Names); entry may be one of them.
func NewNamedKernel(source, entry string, names []string, block hipsys.Dim3, io []Access, options ...string) *Kernel {
	k := &Kernel{Source: source, Entry: entry, Options: append([]string(nil), options...), Block: block, IO: append([]Access(nil), io...),
		Names: append([]string(nil), names...)}
	k.id = kernelID(source, entry, k.Options, k.Names)
	k.mod = moduleID(source, k.Options, k.Names)
	return k
}

// ModuleOf is the module of source compiled with options as a Kernel with no entry
// point, for the calls that need the module only (its variables: Global, ReadGlobal,
// WriteGlobal; LoadModule). It cannot be launched.
func ModuleOf(source string, options ...string) *Kernel {
	return NewKernel(source, "", hipsys.Dim3{}, nil, options...)
}

// NewCodeKernel returns the kernel entry of the module code (Kernel.Code), as the
// platform's ModuleLoadData takes it: a code object on amd, a cubin, PTX or fatbin on
// nvidia, the cpu device's object, or what `cubehip compile` writes for a device. The
// code is copied. io must list the access of each buffer parameter: compiled code has
// no declaration to infer it from.
func NewCodeKernel(code []byte, entry string, block hipsys.Dim3, io []Access) *Kernel {
	k := &Kernel{Code: append([]byte(nil), code...), Entry: entry, Block: block, IO: append([]Access(nil), io...)}
	k.id = kernelID(string(k.Code), entry, []string{"\x00code"}, nil)
	k.mod = codeModuleID(k.Code)
	return k
}

// ModuleOfCode is ModuleOf for a module given as code (NewCodeKernel).
func ModuleOfCode(code []byte) *Kernel {
	return NewCodeKernel(code, "", hipsys.Dim3{}, nil)
}

// what names k in an error: the kernel, or the module for a ModuleOf.
func (k *Kernel) what() string {
	if k.Entry == "" {
		return "module " + k.Module().String()
	}
	return "kernel " + strconv.Quote(k.Entry)
}

// Module is the kernel's module identity: kernels of one source and options share it.
func (k *Kernel) Module() ModuleID {
	if k.mod == (ModuleID{}) {
		if k.Code != nil {
			k.mod = codeModuleID(k.Code) // a Kernel built as a literal
			return k.mod
		}
		k.mod = moduleID(k.Source, k.Options, k.Names) // a Kernel built as a literal
	}
	return k.mod
}

// ID is the kernel's identity. A Kernel built as a literal is hashed on its first ID
// (by the first launch); build kernels that goroutines share with NewKernel.
func (k *Kernel) ID() KernelID {
	if k.id == (KernelID{}) {
		// A Kernel built as a literal: hash on first use.
		if k.Code != nil {
			k.id = kernelID(string(k.Code), k.Entry, []string{"\x00code"}, nil)
			return k.id
		}
		k.id = kernelID(k.Source, k.Entry, k.Options, k.Names)
	}
	return k.id
}

// writes reports whether k writes any of its buffers: a launch that writes none marks
// nothing as written.
func (k *Kernel) writes() bool {
	for _, a := range k.IO {
		if a != Read {
			return true
		}
	}
	return false
}

// kernelID hashes each part with its length in front, so that moving bytes between
// source and entry cannot give two kernels one id.
func kernelID(source, entry string, options, names []string) KernelID {
	return KernelID(hashParts(withNames(append([]string{source, entry}, options...), names)))
}

// moduleID is kernelID without the entry; a marker part keeps a module's id apart from
// every kernel's (no kernel id is a module id by accident).
func moduleID(source string, options, names []string) ModuleID {
	return ModuleID(hashParts(withNames(append([]string{"module", source}, options...), names)))
}

// codeModuleID is the id of a module given as code: its own marker part keeps it apart
// from every source module's id, even one whose source is the same bytes.
func codeModuleID(code []byte) ModuleID {
	return ModuleID(hashParts([]string{"module code", string(code)}))
}

// withNames appends the name expressions behind a marker part, so that an option and a
// name expression of the same text never give one id; with none, the parts are as they
// were before modules had names.
func withNames(parts, names []string) []string {
	if len(names) == 0 {
		return parts
	}
	return append(append(parts, "\x00names"), names...)
}

func hashParts(parts []string) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, s := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// Args are a launch's arguments, passed to the kernel in this order: the buffers (as
// device pointers, each with the access the kernel's IO declares at its position), the
// scalars, and, when Info is set, a pointer to a device buffer holding the info words
// (CubeCL's metadata), uploaded once per distinct content through the stream's info
// cache. The server reads Args during the call only.
type Args struct {
	Buffers []Binding
	Scalars []Scalar
	Info    []uint64
	HasInfo bool // pass the info pointer even when Info is empty
}

// CubeCount is a launch's grid: static, or read from a device buffer holding three u32
// (x, y, z) at launch time.
type CubeCount struct {
	X, Y, Z uint32
	Dynamic *Binding
}

// Static is a fixed grid.
func Static(x, y, z uint32) CubeCount { return CubeCount{X: x, Y: y, Z: z} }

// Dynamic is a grid read from b (three u32) when the launch runs.
func Dynamic(b Binding) CubeCount { return CubeCount{Dynamic: &b} }

// LaunchMode says whether a launch executes or is a dry run (compiled, nothing else).
// Any other value is a malformed launch: Launch refuses it with ErrInvalidArgument
// naming the mode, and enqueues nothing and touches no buffer (the call did not say
// whether it meant to write them).
type LaunchMode uint8

const (
	Execute LaunchMode = iota
	DryRun
)
