package compute

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/cubehip/cubehip/modules/memory"
)

// Handle is an owning reference to a device allocation and the stream whose pools hold
// it (CubeCL's Handle). One value is one reference: Clone for another, Release once.
// Release is safe from any goroutine; the slice returns to its pool once no handle,
// binding, pending command or graph holds it.
type Handle struct {
	memory.Handle
	Stream StreamID
}

// Binding returns a non-owning reference to the same view, which the caller releases.
func (h Handle) Binding() (Binding, error) {
	b, err := h.Handle.Binding()
	if err != nil {
		return Binding{}, err
	}
	return Binding{Binding: b, Stream: h.Stream}, nil
}

// Clone returns a second owning reference.
func (h Handle) Clone() (Handle, error) {
	c, err := h.Handle.Clone()
	if err != nil {
		return Handle{}, err
	}
	return Handle{Handle: c, Stream: h.Stream}, nil
}

// CopyDescriptor describes one tensor copy (CubeCL's CopyDescriptor): the buffer, its
// shape and its strides in elements, and the element size in bytes. The host side is
// always dense (product(shape) * ElemSize bytes); the device side may be pitched: rank >
// 1 and the second-to-last stride larger than the last dimension.
//
// A descriptor whose element count, byte count, row pitch or device span does not fit
// in 64 bits is refused with ErrUnsupportedStrides naming its shape, before anything is
// queued: with wrapping arithmetic such a shape would describe a copy of a few bytes (a
// read of shape [2^62, 4] f32 is 2^66 bytes, 0 once wrapped) that looks valid.
type CopyDescriptor struct {
	Binding  Binding
	Shape    []int
	Strides  []int
	ElemSize int
}

// Linear describes n dense bytes of b: a rank-1 byte copy.
func Linear(b Binding, n int) CopyDescriptor {
	return CopyDescriptor{Binding: b, Shape: []int{n}, Strides: []int{1}, ElemSize: 1}
}

// layout is a descriptor checked and reduced to a copy: rows of width bytes, pitch
// bytes apart on the device. Every field fits in 64 bits (layoutOf checks the
// products), so the arithmetic of the copies never wraps.
type layout struct {
	bytes   uint64 // dense host size
	width   uint64 // bytes per row
	height  uint64 // rows
	pitch   uint64 // device bytes between rows
	span    uint64 // device bytes the copy touches from the view's start
	pitched bool
}

// layoutOf checks d (CubeCL's stride check) and returns its copy layout.
//
// Differs from CubeCL: a rank of 0, ranks that disagree and
// negative sizes panic in CubeCL; here they are ErrUnsupportedStrides like every other
// stride CubeCL cannot copy, because they come straight from user input. So is a shape
// whose sizes overflow 64 bits (see CopyDescriptor).
func layoutOf(d CopyDescriptor) (layout, error) {
	r := len(d.Shape)
	if r == 0 || r != len(d.Strides) || d.ElemSize <= 0 {
		return layout{}, fmt.Errorf("%w: shape %v, strides %v, element size %d", ErrUnsupportedStrides, d.Shape, d.Strides, d.ElemSize)
	}
	for i := range r {
		if d.Shape[i] < 0 || d.Strides[i] <= 0 {
			return layout{}, fmt.Errorf("%w: shape %v, strides %v", ErrUnsupportedStrides, d.Shape, d.Strides)
		}
	}
	if d.Strides[r-1] != 1 {
		return layout{}, fmt.Errorf("%w: last stride %d is not 1", ErrUnsupportedStrides, d.Strides[r-1])
	}
	if r > 1 && d.Strides[r-2] < d.Shape[r-1] {
		return layout{}, fmt.Errorf("%w: row stride %d is shorter than a row of %d", ErrUnsupportedStrides, d.Strides[r-2], d.Shape[r-1])
	}
	for i := 0; i+2 < r; i++ {
		// A product that wraps could equal the stride by accident: it is not dense.
		if dense, ok := mul64(uint64(d.Shape[i+1]), uint64(d.Strides[i+1])); !ok || uint64(d.Strides[i]) != dense {
			return layout{}, fmt.Errorf("%w: outer stride %d of dimension %d is not dense", ErrUnsupportedStrides, d.Strides[i], i)
		}
	}
	overflow := func(what string) error {
		return fmt.Errorf("%w: shape %v of %d-byte elements: its %s overflows 64 bits", ErrUnsupportedStrides, d.Shape, d.ElemSize, what)
	}
	es := uint64(d.ElemSize)
	elems := uint64(d.Shape[r-1])
	l := layout{height: 1}
	var ok bool
	for i := 0; i < r-1; i++ {
		if l.height, ok = mul64(l.height, uint64(d.Shape[i])); !ok {
			return layout{}, overflow("element count")
		}
	}
	if _, ok = mul64(elems, l.height); !ok {
		return layout{}, overflow("element count")
	}
	if l.width, ok = mul64(elems, es); !ok {
		return layout{}, overflow("row size")
	}
	if l.bytes, ok = mul64(l.width, l.height); !ok {
		return layout{}, overflow("byte count")
	}
	l.pitch = l.width
	if r > 1 && d.Strides[r-2] != d.Shape[r-1] {
		l.pitched = true
		if l.pitch, ok = mul64(uint64(d.Strides[r-2]), es); !ok {
			return layout{}, overflow("row pitch")
		}
	}
	if l.height > 0 && l.width > 0 {
		rows, ok := mul64(l.height-1, l.pitch)
		if !ok || rows > math.MaxUint64-l.width {
			return layout{}, overflow("device span")
		}
		l.span = rows + l.width
	}
	return l, nil
}

// mul64 is a*b and whether it fits in 64 bits.
func mul64(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

// deviceSpan is how many device bytes the copy touches from the view's start.
func (l layout) deviceSpan() uint64 { return l.span }
