package server

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// View is a range of a buffer, an offset and a length in bytes, as a kernel argument:
// the kernel gets a pointer to the range's first byte. It is a value that holds no
// reference of its own: the buffer must stay unreleased while a launch uses the view.
type View struct {
	buf         *Buffer
	off, length uint64
}

// View is the length bytes of b that start offset bytes in. A range past b's end is
// refused, ErrOutOfBounds, by the launch that uses it.
func (b *Buffer) View(offset, length uint64) View { return View{buf: b, off: offset, length: length} }

// Buffer is the buffer the view is a range of.
func (v View) Buffer() *Buffer { return v.buf }

// Offset is where the view starts in its buffer, in bytes.
func (v View) Offset() uint64 { return v.off }

// Len is the view's length in bytes.
func (v View) Len() uint64 { return v.length }

// Arg is the view as a kernel argument: a pointer to its first byte.
func (v View) Arg() Arg { return Arg{buf: v.buf, off: v.off, length: v.length, kind: argView} }

// argBinding is a's binding, narrowed to its view where a is one; checked under d.mu.
func (d *Device) argBinding(a *Arg, what string) (compute.Binding, error) {
	if err := d.own(a.buf, what); err != nil {
		return compute.Binding{}, err
	}
	b := a.buf.b
	if a.kind == argView {
		size := a.buf.size
		if a.off > size || a.length > size-a.off {
			return compute.Binding{}, fmt.Errorf("%s: %w: view of %d bytes at offset %d, %v", what, ErrOutOfBounds, a.length, a.off, a.buf)
		}
		_ = b.Narrow(a.off, size-a.off-a.length) // within the buffer: checked above
	}
	return b, nil
}

// Number is the Go types whose slices the typed helpers copy: each has the width and
// the (little-endian) layout of the HIP type of the same name (int8_t ... double).
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// bytesOf is s's memory as bytes: no copy. Every platform cubehip runs on (amd64,
// arm64 hosts; HIP devices) is little-endian, so the bytes are the device's layout.
func bytesOf[T Number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

func sizeOf[T Number]() uint64 {
	var zero T
	return uint64(unsafe.Sizeof(zero))
}

// AllocSlice allocates room for n elements of T on stream s. The buffer remembers T:
// Call refuses it for a kernel's pointer to another type (a float* given a buffer of
// int32), where b.Arg() passes its bytes as they are.
func AllocSlice[T Number](s Stream, n int) (*Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("alloc: %w: %d elements", ErrInvalidArgument, n)
	}
	b, err := s.Alloc(uint64(n) * sizeOf[T]())
	if err == nil {
		b.elem = goSized[reflect.TypeFor[T]().Kind()]
	}
	return b, err
}

// UploadSlice allocates a buffer for data on stream s and writes data into it. The
// buffer remembers T, as AllocSlice's does.
func UploadSlice[T Number](s Stream, data []T) (*Buffer, error) {
	b, err := AllocSlice[T](s, len(data))
	if err != nil {
		return nil, err
	}
	if err := s.Write(b, bytesOf(data)); err != nil {
		_ = b.Release()
		return nil, err
	}
	return b, nil
}

// WriteSlice writes data into the start of dst (Stream.Write, with no copy of data
// beyond the staging every write takes).
func WriteSlice[T Number](s Stream, dst *Buffer, data []T) error { return s.Write(dst, bytesOf(data)) }

// WriteSliceAt writes data into dst starting at element index at (a byte offset of at
// times T's size).
func WriteSliceAt[T Number](s Stream, dst *Buffer, at uint64, data []T) error {
	return s.WriteAt(dst, at*sizeOf[T](), bytesOf(data))
}

// ReadSliceInto fills dst from the start of src (Stream.ReadInto, straight into dst's
// memory).
func ReadSliceInto[T Number](s Stream, dst []T, src *Buffer) error {
	return s.ReadInto(bytesOf(dst), src)
}

// ReadSliceAt fills dst from src starting at element index at.
func ReadSliceAt[T Number](s Stream, dst []T, src *Buffer, at uint64) error {
	return s.ReadAt(bytesOf(dst), src, at*sizeOf[T]())
}

// ReadSlice returns src's contents as elements of T: as many whole elements as src holds.
func ReadSlice[T Number](s Stream, src *Buffer) ([]T, error) {
	if src == nil {
		return nil, fmt.Errorf("read: %w: nil buffer", ErrInvalidArgument)
	}
	out := make([]T, src.size/sizeOf[T]())
	if err := ReadSliceInto(s, out, src); err != nil {
		return nil, err
	}
	return out, nil
}
