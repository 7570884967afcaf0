package memory

import "fmt"

// Binding is a non-owning reference to an allocation: CubeCL's
// ManagedMemoryBinding with the offsets and size of a BufferBinding. It keeps
// the slice from being reused (the pool sees it as busy) but does not count
// against [Handle.CanMut]. It is what kernels, copies and resource lookups
// receive.
//
// As with [Handle], one value is one reference: copy with [Binding.Clone]
// and call [Binding.Release] once.
type Binding struct {
	d    *descriptor
	id   ID
	tok  *token
	size uint64
	off  offsets
}

// ID returns the allocation's identity, or 0 for a released binding.
func (b Binding) ID() ID { return b.id }

// Size returns the buffer's size, ignoring offsets.
func (b Binding) Size() uint64 { return b.size }

// Offsets returns the bytes trimmed from the start and the end.
func (b Binding) Offsets() (start, end uint64) { return b.off.start, b.off.end }

// SizeInUse is Size minus both offsets.
func (b Binding) SizeInUse() uint64 { return b.size - b.off.start - b.off.end }

// Imported reports whether the allocation is memory the manager did not allocate
// (Manager.Import): another library's, given back through ReclaimImports.
func (b Binding) Imported() bool { return b.d != nil && b.d.hint.Load() != nil }

// Valid reports whether b still holds its reference.
func (b Binding) Valid() bool { return b.d.live(b.id) }

// Narrow trims the view in place, as [Handle.Narrow] does. Narrowing a
// binding never changes the handle it came from.
func (b *Binding) Narrow(start, end uint64) error { return b.off.narrow(b.size, start, end) }

// Clone returns a second binding to the same view.
func (b Binding) Clone() (Binding, error) {
	if !b.Valid() {
		return Binding{}, fmt.Errorf("%w: clone of binding %d", ErrReleased, b.id)
	}
	b.d.take(oneRef)
	b.tok = b.tok.again(b.id, b.size, "binding")
	return b, nil
}

// Release gives up the reference and zeroes b. Releasing a zero or already
// released binding returns [ErrReleased] and changes nothing.
func (b *Binding) Release() error {
	if !b.d.give(b.id, oneRef) {
		return fmt.Errorf("%w: binding %d", ErrReleased, b.id)
	}
	b.tok.stop()
	*b = Binding{}
	return nil
}

func (b Binding) String() string {
	return fmt.Sprintf("binding %d (%d bytes, offsets %d/%d)", b.id, b.size, b.off.start, b.off.end)
}
