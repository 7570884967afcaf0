package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Kernel is a HIP C++ kernel: source with a `__global__` entry point (an `extern "C"`
// name, or a C++ name expression: see DefineKernel), the options it is compiled with,
// its block shape, its dynamic shared memory and the access of each of its buffer
// parameters. The kernels of one source and options are one Module. Build it once with NewKernel or DefineKernel and
// launch it many times, on any device. It cannot be changed once built (its accessors
// return copies), so it is safe to share between goroutines.
type Kernel struct {
	k        *compute.Kernel
	sig      []sigParam // the entry's parameters as the source declares them; nil when unread
	inferred bool       // the IO was inferred from sig, not given
}

// Dim3 is a grid or block shape: x, y and z counts (of blocks, or of threads per block).
//
// A zero Y or Z means 1, so Dim3{X: n} is n×1×1, in a grid and in a block alike. X is
// never taken for 1: a grid with X == 0 is an error (a launch of no blocks is almost
// always a count computed wrong, and CUDA and CuPy refuse it too: to launch nothing for
// an empty input, skip the call), and so is a block with X == 0, except the whole zero
// Dim3 given as a block, which means the default block, 256×1×1.
type Dim3 = hipsys.Dim3

// defaultBlock is the block of a kernel that is given none: 256 threads, a multiple
// of every GPU's warp or wavefront, as the C ABI and the Python package use too.
var defaultBlock = Dim3{X: 256, Y: 1, Z: 1}

// shape is d with a zero Y or Z taken as 1.
func shape(d Dim3) Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// Access is how a kernel uses one buffer parameter: Read, Write or ReadWrite. A launch
// checks the buffers it reads for a carried failure (and passes it on to its outputs
// instead of running), and leaves the buffers it writes carrying its own failure.
type Access = compute.Access

// The accesses of a kernel's buffer parameters.
const (
	Read      = compute.Read      // only read
	Write     = compute.Write     // only written
	ReadWrite = compute.ReadWrite // read and written in place
)

// NewKernel returns a kernel of source's entry point, launched in blocks of block
// threads (the zero Dim3: the default, 256×1×1), with io the access of each buffer parameter in
// order (nil: inferred from the signature, as DefineKernel does without IO); options go
// to the compiler as given. It is DefineKernel with Block, IO and CompilerOptions.
func NewKernel(source, entry string, block hipsys.Dim3, io []Access, options ...string) *Kernel {
	opts := []KernelOption{Block(block), CompilerOptions(options...)}
	if io != nil {
		opts = append(opts, IO(io...))
	}
	return DefineKernel(source, entry, opts...)
}

// KernelOption sets one property of a kernel DefineKernel builds.
type KernelOption func(*kernelSpec)

type kernelSpec struct {
	block   hipsys.Dim3
	io      []Access // nil: inferred from the signature
	options []string
	shared  uint32
	coop    bool
	names   []string // the module's name expressions (Module.Kernel); nil: the entry's own, if it needs one
}

// Block is the kernel's block shape, threads per block in x, y, z (default
// 256×1×1, as in C and Python). A zero Y or Z is 1: Block(Dim3{X: 64}) is 64×1×1.
func Block(b hipsys.Dim3) KernelOption { return func(s *kernelSpec) { s.block = b } }

// IO is the access of each of the kernel's buffer parameters, in the order they appear.
// Without it, each is inferred from the entry's declaration in the source, as the
// Python package does: a `const T*` parameter is Read, any other pointer ReadWrite. IO
// overrides that, and says what the declaration cannot: Write for an output the kernel
// never reads (a failure then spares it the check of its old contents), the accesses
// of a kernel declared through a macro, or IO() for a kernel that takes no buffer.
func IO(io ...Access) KernelOption {
	return func(s *kernelSpec) { s.io = append([]Access{}, io...) }
}

// CompilerOptions are passed to the platform's compiler as given (the platform adds
// its own includes); they are part of the kernel's identity in the kernel caches.
func CompilerOptions(options ...string) KernelOption {
	return func(s *kernelSpec) { s.options = append(s.options, options...) }
}

// SharedMem is the dynamic shared memory each block gets, in bytes: the size of the
// kernel's `extern __shared__` array (default 0). A launch checks it against the
// device's limit per block.
func SharedMem(bytes uint32) KernelOption { return func(s *kernelSpec) { s.shared = bytes } }

// Cooperative launches the kernel cooperatively (hipModuleLaunchCooperativeKernel,
// cuLaunchCooperativeKernel): every block of the grid runs at once, so that blocks may
// wait for each other, as cooperative groups' this_grid().sync() does (valid only in such a
// launch). A launch whose grid has more blocks than the device holds at once
// (Device.MaxActiveBlocksPerMultiprocessor × Props().MultiProcessorCount) is refused at
// the call, naming that limit. On the cpu device, this_grid().sync() in a kernel
// launched without it fails that launch, naming the construct.
func Cooperative() KernelOption { return func(s *kernelSpec) { s.coop = true } }

// DefineKernel returns a kernel of source's entry point with the given options: by
// default blocks of 256×1×1 threads, the access of each buffer inferred from the
// entry's declaration (see IO), no dynamic shared memory and no compiler options.
//
// entry is an `extern "C"` kernel's name, or a C++ name expression the platform's
// compiler resolves: a template's specialization ("reduce<float, 256>", instantiated by
// the compile), a C++-linkage kernel ("scale"), an overload picked by a cast
// ("(void(*)(int*, int))twice"). Such a kernel's module is compiled with the expression
// (NewModuleWithNames puts several in one module).
//
//	saxpy := server.DefineKernel(source, "saxpy") // 256 threads a block; x Read, y ReadWrite
func DefineKernel(source, entry string, opts ...KernelOption) *Kernel {
	spec := kernelSpec{block: defaultBlock}
	for _, o := range opts {
		if o != nil {
			o(&spec)
		}
	}
	if spec.block == (Dim3{}) {
		spec.block = defaultBlock
	}
	names := spec.names
	if names == nil && needsName(source, entry) {
		names = []string{entry}
	}
	sig, ok := entrySignature(source, entry)
	inferred := spec.io == nil && ok
	if inferred {
		spec.io = inferIO(sig)
	}
	k := compute.NewNamedKernel(source, entry, names, shape(spec.block), spec.io, spec.options...)
	k.SharedMem = spec.shared
	k.Cooperative = spec.coop
	return &Kernel{k: k, sig: sig, inferred: inferred}
}

// Source is the kernel's HIP C++ source.
func (k *Kernel) Source() string { return k.k.Source }

// Entry is the kernel's entry point as given: an `extern "C"` function's name, or a C++
// name expression.
func (k *Kernel) Entry() string { return k.k.Entry }

// Block is the kernel's block shape.
func (k *Kernel) Block() hipsys.Dim3 { return k.k.Block }

// SharedMem is the dynamic shared memory per block, in bytes.
func (k *Kernel) SharedMem() uint32 { return k.k.SharedMem }

// Cooperative reports whether the kernel is launched cooperatively (Cooperative).
func (k *Kernel) Cooperative() bool { return k.k.Cooperative }

// IO is a copy of the access of each buffer parameter.
func (k *Kernel) IO() []Access { return append([]Access(nil), k.k.IO...) }

// CompilerOptions is a copy of the options passed to the compiler.
func (k *Kernel) CompilerOptions() []string { return append([]string(nil), k.k.Options...) }

// ID is the kernel's identity in the kernel caches: a hash of its source, entry point
// and compiler options.
func (k *Kernel) ID() compute.KernelID { return k.k.ID() }

// Compute is the kernel as package compute takes it, for a program that also drives a
// compute.Server. It must not be changed.
func (k *Kernel) Compute() *compute.Kernel { return k.k }

// String is the kernel as a person reads it: "Kernel(saxpy)".
func (k *Kernel) String() string {
	if !k.valid() {
		return "Kernel(nil)"
	}
	return "Kernel(" + k.k.Entry + ")"
}

// valid reports whether k is a kernel NewKernel or DefineKernel built.
func (k *Kernel) valid() bool { return k != nil && k.k != nil }

// Compile compiles k for the device now (or loads it from the kernel caches), so that a
// mistake in its source is reported here, as a *CompileError with the compiler's log,
// rather than carried by the outputs of its first launch. Launch compiles on first use
// anyway.
func (d *Device) Compile(k *Kernel) error {
	if !k.valid() {
		return fmt.Errorf("compile: %w: nil kernel", ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	_, err := d.srv.Compile(k.k)
	return err
}
