package memory

import "fmt"

// Handle is an owning reference to an allocation: CubeCL's
// ManagedMemoryHandle together with the offsets and logical size of
// cubecl_runtime's Handle.
//
// A Handle value is one reference. Copying the struct does not add one: use
// [Handle.Clone] for a second owner and [Handle.Binding] for a non-owning
// reference, and call [Handle.Release] exactly once per reference.
//
// Differs from CubeCL: Go has no destructors, so the
// reference counts are explicit. A handle that is never released keeps its
// slice busy forever; with [WithLeakReport] the garbage collector reports
// such a handle, but pool reuse never waits on it.
//
// The methods of Handle are safe for concurrent use on distinct values that
// share an allocation; a single value must not be released concurrently.
type Handle struct {
	d    *descriptor
	id   ID
	tok  *token
	size uint64 // whole buffer, ignoring offsets
	off  offsets
}

// offsets are CubeCL's offset_start and offset_end: bytes trimmed from each
// end of the buffer. They accumulate when narrowed repeatedly.
type offsets struct{ start, end uint64 }

func (o *offsets) narrow(size, start, end uint64) error {
	// Checked without overflow: the sum of three caller values can wrap.
	used := o.start + o.end
	if start > size-used || end > size-used-start {
		return fmt.Errorf("%w: trimming %d+%d bytes from a view of %d", ErrOutOfRange, start, end, size-used)
	}
	o.start += start
	o.end += end
	return nil
}

// ID returns the allocation's identity, or 0 for a released handle.
func (h Handle) ID() ID { return h.id }

// Size returns the buffer's size, ignoring offsets.
func (h Handle) Size() uint64 { return h.size }

// Offsets returns the bytes trimmed from the start and the end.
func (h Handle) Offsets() (start, end uint64) { return h.off.start, h.off.end }

// SizeInUse is Size minus both offsets: the bytes a kernel sees.
func (h Handle) SizeInUse() uint64 { return h.size - h.off.start - h.off.end }

// Valid reports whether h still holds its reference.
func (h Handle) Valid() bool { return h.d.live(h.id) }

// CanMut reports CubeCL's can_mut: no other owning handle exists, so the
// buffer may be written in place. Bindings do not count. A released handle
// cannot mutate.
func (h Handle) CanMut() bool {
	if !h.Valid() {
		return false
	}
	// The pool slice holds one handle reference once bound; an unbound
	// handle has only its own.
	return h.d.canMut()
}

// Sole reports whether h is the only user reference to its pooled
// allocation: no other handle, and no binding, so no queued command, graph or
// view holds it. A released handle is not sole.
func (h Handle) Sole() bool { return h.Valid() && h.d.sole() }

// Narrow trims start bytes from the front and end bytes from the back of
// the view, in place. It fails with [ErrOutOfRange], changing nothing, if
// the view would go negative.
func (h *Handle) Narrow(start, end uint64) error { return h.off.narrow(h.size, start, end) }

// Clone returns a second owning reference with the same offsets. It fails
// with [ErrReleased] if h no longer holds its reference.
func (h Handle) Clone() (Handle, error) {
	if !h.Valid() {
		return Handle{}, fmt.Errorf("%w: clone of handle %d", ErrReleased, h.id)
	}
	h.d.take(oneHandle)
	h.tok = h.tok.again(h.id, h.size, "handle")
	return h, nil
}

// Binding returns a non-owning reference with the same offsets and size: it
// keeps the memory alive but does not affect [Handle.CanMut]. The binding
// must be released on its own.
func (h Handle) Binding() (Binding, error) {
	if !h.Valid() {
		return Binding{}, fmt.Errorf("%w: binding of handle %d", ErrReleased, h.id)
	}
	h.d.take(oneRef)
	return Binding{d: h.d, id: h.id, tok: h.tok.again(h.id, h.size, "binding"), size: h.size, off: h.off}, nil
}

// Release gives up the reference and zeroes h. Once the last user reference
// is gone the slice is free for the next reservation. Releasing a zero or
// already released handle returns [ErrReleased] and changes nothing.
func (h *Handle) Release() error {
	if !h.d.give(h.id, oneHandle) {
		return fmt.Errorf("%w: handle %d", ErrReleased, h.id)
	}
	h.tok.stop()
	*h = Handle{}
	return nil
}

// Cursor is the stream cursor stamped by [Manager.Bind]. It is read on the
// manager's goroutine only.
func (h Handle) Cursor() uint64 {
	if !h.Valid() {
		return 0
	}
	return h.d.cursor
}

func (h Handle) String() string {
	return fmt.Sprintf("handle %d (%d bytes, offsets %d/%d)", h.id, h.size, h.off.start, h.off.end)
}
