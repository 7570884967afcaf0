package server

import "fmt"

// Module variables: a kernel's `__constant__` and `__device__` variables at namespace
// scope (a filter mask, a lookup table, a counter the kernel adds to), read and written
// from the host by their symbol name: the name as written for a variable at global
// scope in C++, the mangled name for one inside a namespace. The kernel is compiled and
// loaded for the device first if it was not yet; every kernel of one source, entry
// point and options shares one module, so its variables are the ones its launches see.
//
// A module variable is not a Buffer: it carries no failure, and work on another stream
// is not made to wait for its writes. Write it on the stream that launches the kernel
// reading it (or Sync the writing stream first).

// GlobalSize is the size in bytes of the module variable name of kernel k. An unknown
// name is an error naming the variable and the kernel that wraps the platform's
// hipsys.ErrorNotFound.
func (d *Device) GlobalSize(k *Kernel, name string) (uint64, error) {
	if !k.valid() {
		return 0, fmt.Errorf("global %q: %w: nil kernel", name, ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	_, size, err := d.srv.Global(k.k, name)
	return size, err
}

// WriteGlobal copies data into the module variable name of kernel k, queued on the
// stream after the work already queued there, so the stream's next launch of k sees it.
// data must be exactly the variable's size (ErrInvalidArgument otherwise, naming the
// variable and both sizes) and may be reused as soon as WriteGlobal returns. Inside a
// capture window the write is recorded, and every replay writes the same bytes.
func (s Stream) WriteGlobal(k *Kernel, name string, data []byte) error {
	if !k.valid() {
		return fmt.Errorf("write global %q: %w: nil kernel", name, ErrInvalidArgument)
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.WriteGlobal(k.k, name, data, s.id)
}

// ReadGlobalInto copies the module variable name of kernel k into dst, which must be
// exactly the variable's size, once the work queued on the stream so far has run: a
// launch's writes to a __device__ variable are there. It waits for that work, and is
// refused while the stream records a graph (ErrCaptureState).
func (s Stream) ReadGlobalInto(dst []byte, k *Kernel, name string) error {
	if !k.valid() {
		return fmt.Errorf("read global %q: %w: nil kernel", name, ErrInvalidArgument)
	}
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.srv.ReadGlobal(k.k, name, dst, s.id)
}

// ReadGlobal returns a copy of the module variable name of kernel k, as ReadGlobalInto.
func (s Stream) ReadGlobal(k *Kernel, name string) ([]byte, error) {
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

// WriteGlobalSlice writes data into the module variable name of kernel k
// (Stream.WriteGlobal): len(data) elements of T must fill the variable exactly.
func WriteGlobalSlice[T Number](s Stream, k *Kernel, name string, data []T) error {
	return s.WriteGlobal(k, name, bytesOf(data))
}

// ReadGlobalSlice returns the module variable name of kernel k as elements of T
// (Stream.ReadGlobal); the variable's size must be a whole number of them.
func ReadGlobalSlice[T Number](s Stream, k *Kernel, name string) ([]T, error) {
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
