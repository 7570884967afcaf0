package compute

import (
	"fmt"

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
// bytes apart on the device.
type layout struct {
	bytes   uint64 // dense host size
	width   uint64 // bytes per row
	height  uint64 // rows
	pitch   uint64 // device bytes between rows
	pitched bool
}

// layoutOf checks d (CubeCL's stride check) and returns its copy layout.
//
// Differs from CubeCL: a rank of 0, ranks that disagree and
// negative sizes panic in CubeCL; here they are ErrUnsupportedStrides like every other
// stride CubeCL cannot copy, because they come straight from user input.
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
		if d.Strides[i] != d.Shape[i+1]*d.Strides[i+1] {
			return layout{}, fmt.Errorf("%w: outer stride %d of dimension %d is not dense", ErrUnsupportedStrides, d.Strides[i], i)
		}
	}
	es := uint64(d.ElemSize)
	l := layout{width: uint64(d.Shape[r-1]) * es, height: 1}
	for i := 0; i < r-1; i++ {
		l.height *= uint64(d.Shape[i])
	}
	l.bytes = l.width * l.height
	l.pitch = l.width
	if r > 1 && d.Strides[r-2] != d.Shape[r-1] {
		l.pitched = true
		l.pitch = uint64(d.Strides[r-2]) * es
	}
	return l, nil
}

// deviceSpan is how many device bytes the copy touches from the view's start.
func (l layout) deviceSpan() uint64 {
	if l.height == 0 || l.width == 0 {
		return 0
	}
	return (l.height-1)*l.pitch + l.width
}
