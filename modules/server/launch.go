package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Kernel is a HIP C++ kernel: source with an `extern "C" __global__` entry point, the
// options it is compiled with, its block shape, its dynamic shared memory and the access
// of each of its buffer parameters. Build it once with NewKernel and launch it many
// times, on any device; it is immutable and safe to share between goroutines.
type Kernel = compute.Kernel

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
// threads, with io the access of each buffer parameter in order; options go to the
// compiler as given.
func NewKernel(source, entry string, block hipsys.Dim3, io []Access, options ...string) *Kernel {
	return compute.NewKernel(source, entry, block, io, options...)
}

// Scalar is one by-value kernel argument, built by U32, I32, F32, U64, I64 or F64 to
// match the kernel parameter's C type.
type Scalar = compute.Scalar

// U32, I32, F32, U64, I64 and F64 build scalars of the kernel parameter's C type.
func U32(v uint32) Scalar  { return compute.U32(v) }
func I32(v int32) Scalar   { return compute.I32(v) }
func F32(v float32) Scalar { return compute.F32(v) }
func U64(v uint64) Scalar  { return compute.U64(v) }
func I64(v int64) Scalar   { return compute.I64(v) }
func F64(v float64) Scalar { return compute.F64(v) }

// Args are a launch's arguments, passed to the kernel in this order: the buffers (each
// with the access the kernel declares at its position), the scalars, and, when Info is
// non-empty or HasInfo is set, a pointer to a device buffer holding the info words (the
// shapes and strides a kernel reads at run time), uploaded once per distinct content
// and then reused. Launch reads them during the call only.
type Args struct {
	Buffers []*Buffer
	Scalars []Scalar
	Info    []uint64
	HasInfo bool
}

// Compile compiles k for the device now (or loads it from the kernel caches), so that a
// mistake in its source is reported here, as a *CompileError with the compiler's log,
// rather than carried by the outputs of its first launch. Launch compiles on first use
// anyway.
func (d *Device) Compile(k *Kernel) error {
	if k == nil {
		return fmt.Errorf("compile: %w: nil kernel", ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	_, err := d.srv.Compile(k)
	return err
}

// Launch enqueues k on the stream over grid blocks of k.Block threads, and returns
// without waiting for it. It returns an error only for a call that enqueues nothing
// because it is malformed: a nil kernel, a released or foreign buffer, a buffer count
// that does not match k's access list, or, where the platform lists a compiled kernel's
// parameters, arguments of the wrong count or width (k's outputs then carry the error
// too). Everything that goes wrong with the work itself
// (a compile error, an input that carries a failure, a launch the driver refuses) is
// carried by the buffers k writes and returned by their next Read, Sync or Check. A
// grid with a zero dimension enqueues nothing and changes nothing.
//
// In steady state (k compiled, the buffers on this stream, the info cached) a launch
// allocates nothing. On a platform with a launch queue (nvidia; Options.DirectLaunch
// turns it off), such a launch may be issued by the queue's thread after Launch returns:
// the Device's next call of any other kind waits for it first, and a refusal then
// leaves the buffers as it would have had it been seen at once.
func (s Stream) Launch(k *Kernel, grid hipsys.Dim3, args Args) error {
	return s.launch(k, compute.CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}, nil, &args)
}

// LaunchDynamic is Launch with the grid read from count (three uint32: x, y, z) when
// the launch runs, after the work queued before it. A count buffer that carries a
// failure, or that cannot be read, leaves k's outputs carrying that failure.
func (s Stream) LaunchDynamic(k *Kernel, count *Buffer, args Args) error {
	if count == nil {
		return fmt.Errorf("launch: count: %w: nil buffer", ErrInvalidArgument)
	}
	return s.launch(k, compute.CubeCount{}, count, &args)
}

func (s Stream) launch(k *Kernel, grid compute.CubeCount, count *Buffer, args *Args) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if count != nil {
		if err := d.own(count, "launch: count"); err != nil {
			return err
		}
		grid.Dynamic = &count.b
	}
	bs, err := d.bindings(args.Buffers, "launch")
	if err != nil {
		return err
	}
	a := compute.Args{Buffers: bs, Scalars: args.Scalars, Info: args.Info, HasInfo: args.HasInfo}
	err = d.srv.Launch(k, grid, &a, s.id, compute.Execute)
	clear(bs)
	return err
}
