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
