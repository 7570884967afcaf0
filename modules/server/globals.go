package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// Module variables: a module's `__constant__` and `__device__` variables at namespace
// scope (a filter mask, a lookup table, a counter the kernel adds to), read and written
// from the host by their symbol name: the name as written for a variable at global
// scope in C++, the mangled name for one inside a namespace. The module is compiled and
// loaded for the device first if it was not yet; every kernel of one source and options
// shares one module (see Module), so its variables are the ones every kernel of the
// source sees.
//
// A module variable is not a Buffer: it carries no failure, and work on another stream
// is not made to wait for its writes. Write it on the stream that launches the kernel
// reading it (or Sync the writing stream first).

// Code is what the module variable calls take: a *Module, or any *Kernel of one, which
// names its module.
type Code interface {
	module() *compute.Kernel // nil for a nil Module or Kernel
}

func (k *Kernel) module() *compute.Kernel {
	if !k.valid() {
		return nil
	}
	return k.k
}

// codeOf is c's module as compute takes it, or an error for a nil one.
func codeOf(c Code, what, name string) (*compute.Kernel, error) {
	if c == nil || c.module() == nil {
		return nil, fmt.Errorf("%s %q: %w: nil module or kernel", what, name, ErrInvalidArgument)
	}
	return c.module(), nil
}

// GlobalSize is the size in bytes of the module variable name of c's module. An unknown
// name is an error naming the variable and the kernel that wraps the platform's
// hipsys.ErrorNotFound.
func (d *Device) GlobalSize(c Code, name string) (uint64, error) {
	k, err := codeOf(c, "global", name)
	if err != nil {
		return 0, err
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	_, size, err := d.srv.Global(k, name)
	return size, err
}

// WriteGlobal copies data into the module variable name of c's module, queued on the
// stream after the work already queued there, so the stream's next launch sees it.
// data must be exactly the variable's size (ErrInvalidArgument otherwise, naming the
// variable and both sizes) and may be reused as soon as WriteGlobal returns. Inside a
// capture window the write is recorded, and every replay writes the same bytes.
func (s Stream) WriteGlobal(c Code, name string, data []byte) error {
	k, err := codeOf(c, "write global", name)
	if err != nil {
		return err
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.WriteGlobal(k, name, data, s.id)
}

// ReadGlobalInto copies the module variable name of c's module into dst, which must be
// exactly the variable's size, once the work queued on the stream so far has run: a
// launch's writes to a __device__ variable are there. It waits for that work, and is
// refused while the stream records a graph (ErrCaptureState).
func (s Stream) ReadGlobalInto(dst []byte, c Code, name string) error {
	k, err := codeOf(c, "read global", name)
	if err != nil {
		return err
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.ReadGlobal(k, name, dst, s.id)
}

// ReadGlobal returns a copy of the module variable name of c's module, as ReadGlobalInto.
func (s Stream) ReadGlobal(k Code, name string) ([]byte, error) {
	size, err := s.d.GlobalSize(k, name)
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if err := s.ReadGlobalInto(out, k, name); err != nil {
		return nil, err
	}
	return out, nil
}

// WriteGlobalSlice writes data into the module variable name of c's module
// (Stream.WriteGlobal): len(data) elements of T must fill the variable exactly.
func WriteGlobalSlice[T Number](s Stream, k Code, name string, data []T) error {
	return s.WriteGlobal(k, name, bytesOf(data))
}

// ReadGlobalSlice returns the module variable name of c's module as elements of T
// (Stream.ReadGlobal); the variable's size must be a whole number of them.
func ReadGlobalSlice[T Number](s Stream, k Code, name string) ([]T, error) {
	size, err := s.d.GlobalSize(k, name)
	if err != nil {
		return nil, err
	}
	if size%sizeOf[T]() != 0 {
		return nil, fmt.Errorf("read global %q: %w: %d bytes is not a whole number of %d-byte elements",
			name, ErrInvalidArgument, size, sizeOf[T]())
	}
	out := make([]T, size/sizeOf[T]())
	if err := s.ReadGlobalInto(bytesOf(out), k, name); err != nil {
		return nil, err
	}
	return out, nil
}

// GlobalBuffer is a Buffer over the module variable name of c's module, without a copy:
// what a program hands a kernel that takes the variable's address, or another library,
// or reads and writes as it does any buffer (CuPy's RawModule.get_global). It is the
// variable's own memory, imported (Stream.Import), homed on the stream: writes through it
// are tracked and ordered as a buffer's, and failures carried, like any buffer's. The
// variable stays as long as the device; releasing the buffer frees nothing. Calls that
// reach the variable by name (WriteGlobal, ReadGlobal) are not ordered with the buffer's
// work on other streams: order them yourself (a Sync).
func (s Stream) GlobalBuffer(c Code, name string) (*Buffer, error) {
	k, err := codeOf(c, "global buffer", name)
	if err != nil {
		return nil, err
	}
	d := s.d
	if err := d.enter(); err != nil {
		return nil, err
	}
	ptr, size, err := d.srv.Global(k, name)
	d.leave()
	if err != nil {
		return nil, err
	}
	b, err := s.Import(ptr, size, nil)
	if err != nil {
		return nil, fmt.Errorf("global buffer %q: %w", name, err)
	}
	return b, nil
}
