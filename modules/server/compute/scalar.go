package compute

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Scalar is one by-value kernel argument: a value of one of HIP's scalar types, or the
// raw bytes of a struct. Scalars go after the buffers, in Args.Scalars' order, unless an
// Order lays the parameter block out in another (see Ordered).
type Scalar struct {
	bits  uint64
	raw   []byte // scalarRaw: the struct's bytes, laid out as the kernel's C type has them
	order *Order // scalarOrder: the launch's whole layout
	kind  scalarKind
	align uint8 // scalarRaw: its alignment
}

type scalarKind uint8

// The kinds say the C type, not only the width, so that a mismatch names what was given.
const (
	scalarU32 scalarKind = iota // the zero Scalar is a uint32 0
	scalarU64
	scalarI8
	scalarU8
	scalarI16
	scalarU16
	scalarI32
	scalarF32
	scalarI64
	scalarF64
	scalarRaw
	scalarOrder
)

// Constructors of scalars of each HIP scalar type.
func I8(v int8) Scalar     { return Scalar{bits: uint64(uint8(v)), kind: scalarI8} }
func U8(v uint8) Scalar    { return Scalar{bits: uint64(v), kind: scalarU8} }
func I16(v int16) Scalar   { return Scalar{bits: uint64(uint16(v)), kind: scalarI16} }
func U16(v uint16) Scalar  { return Scalar{bits: uint64(v), kind: scalarU16} }
func I32(v int32) Scalar   { return Scalar{bits: uint64(uint32(v)), kind: scalarI32} }
func U32(v uint32) Scalar  { return Scalar{bits: uint64(v), kind: scalarU32} }
func F32(v float32) Scalar { return Scalar{bits: uint64(math.Float32bits(v)), kind: scalarF32} }
func I64(v int64) Scalar   { return Scalar{bits: uint64(v), kind: scalarI64} }
func U64(v uint64) Scalar  { return Scalar{bits: v, kind: scalarU64} }
func F64(v float64) Scalar { return Scalar{bits: math.Float64bits(v), kind: scalarF64} }

// Raw is a by-value struct: b holds its bytes as the kernel's C type lays them out
// (padding included), align its alignment (a power of two up to 128; anything else is
// taken as 8). The launch reads b during the call only.
func Raw(b []byte, align int) Scalar {
	if align < 1 || align > 128 || align&(align-1) != 0 {
		align = 8
	}
	return Scalar{raw: b, kind: scalarRaw, align: uint8(align)}
}

// Size is the scalar's width in the parameter block, in bytes.
func (s Scalar) Size() uint32 {
	switch s.kind {
	case scalarI8, scalarU8:
		return 1
	case scalarI16, scalarU16:
		return 2
	case scalarU32, scalarI32, scalarF32:
		return 4
	case scalarRaw:
		return uint32(len(s.raw))
	case scalarOrder:
		return 0
	}
	return 8
}

// Floating reports whether the scalar is a float or a double, and Integer whether it is
// one of the integer types: a launch checks them against the parameter's declared type.
// A struct is neither.
func (s Scalar) Floating() bool { return s.kind == scalarF32 || s.kind == scalarF64 }

func (s Scalar) Integer() bool { return s.kind != scalarRaw && s.kind != scalarOrder && !s.Floating() }

var scalarTypes = [...]string{
	scalarU32: "uint32", scalarU64: "uint64", scalarI8: "int8", scalarU8: "uint8",
	scalarI16: "int16", scalarU16: "uint16", scalarI32: "int32", scalarF32: "float32",
	scalarI64: "int64", scalarF64: "float64", scalarRaw: "struct", scalarOrder: "layout",
}

// String names the scalar's type ("int32", "float64", "16-byte struct"), as a launch's
// argument error reports what it was given.
func (s Scalar) String() string {
	if s.kind == scalarRaw {
		return fmt.Sprintf("%d-byte struct", len(s.raw))
	}
	return scalarTypes[s.kind]
}

func (s Scalar) append(a *hipsys.KernelArgs) {
	switch s.kind {
	case scalarU32, scalarI32, scalarF32:
		a.U32(uint32(s.bits))
	case scalarU64, scalarI64, scalarF64:
		a.U64(s.bits)
	case scalarRaw:
		a.Raw(s.raw, int(s.align))
	case scalarOrder:
		s.order.lay(a)
	default: // 1 and 2 bytes, at their own alignment
		var b [2]byte
		binary.LittleEndian.PutUint16(b[:], uint16(s.bits))
		n := int(s.Size())
		a.Raw(b[:n], n)
	}
}

// Order lays a launch's parameter block out in the kernel's declared order, where
// buffers and scalars interleave (`saxpy(int n, float a, const float* x, float* y)`).
// The launch packs the buffers' device pointers first; the one scalar Ordered returns,
// passed as the launch's only scalar, then re-lays the block: Params[i] is the kernel's
// parameter i, a buffer (its index in Args.Buffers) or one of Scalars. An info
// pointer, if any, stays the last parameter. An Order is reused from launch to launch
// (its storage kept), so that an ordered launch allocates nothing.
type Order struct {
	Params  []Param
	Scalars []Scalar
	ptrs    []uint64
}

// Param is one parameter of an Order: Args.Buffers[Index] when Buffer is set, else
// Order.Scalars[Index].
type Param struct {
	Buffer bool
	Index  int
}

// Ordered is the scalar that lays the launch's block out as o says; o must stay
// unchanged until the launch returns.
func Ordered(o *Order) Scalar { return Scalar{order: o, kind: scalarOrder} }

// lay runs when the buffers' pointers are a's first entries and nothing follows them.
func (o *Order) lay(a *hipsys.KernelArgs) {
	buf, offs := a.Buffer(), a.Offsets()
	o.ptrs = o.ptrs[:0]
	for _, off := range offs {
		o.ptrs = append(o.ptrs, binary.LittleEndian.Uint64(buf[off:]))
	}
	a.Reset()
	for _, p := range o.Params {
		switch {
		case p.Buffer && p.Index < len(o.ptrs):
			a.U64(o.ptrs[p.Index])
		case !p.Buffer && p.Index < len(o.Scalars) && !o.Scalars[p.Index].ordered():
			o.Scalars[p.Index].append(a)
		}
	}
}

// ordered reports whether s is an Order's scalar: a launch whose Args.Scalars is that
// one scalar has its parameters laid out in the Order's sequence, not buffers first, and
// a check of the arguments against the kernel's parameters must follow that sequence
// (the Device checks it before it launches).
func (s Scalar) ordered() bool { return s.kind == scalarOrder }
