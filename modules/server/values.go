package server

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// The conversion of Call's plain Go values into kernel arguments. No path here keeps,
// formats or otherwise lets escape the interface values it is given: a caller's
// variadic arguments then stay on its stack, and a steady-state Call allocates nothing.

// fromValues converts Call's arguments into Args in d.vals (scratch, under d.mu), each
// to the type of the parameter it goes to (see Stream.Call).
func (d *Device) fromValues(k *Kernel, vals []any) ([]Arg, error) {
	out := d.vals[:0]
	for i, v := range vals {
		var p *sigParam
		if i < len(k.sig) {
			p = &k.sig[i]
		}
		a, err := d.value(k, i, p, v)
		if err != nil {
			d.vals = out
			return nil, err
		}
		out = append(out, a)
	}
	d.vals = out
	return out, nil
}

// value converts v, argument i, for parameter p (nil where the source's declaration
// was not read).
func (d *Device) value(k *Kernel, i int, p *sigParam, v any) (Arg, error) {
	switch x := v.(type) {
	case Arg:
		return x, nil // explicit: passed as it is, its width checked against the kernel's
	case *Buffer:
		if p != nil && !p.pointer && p.ctype != cUnknown {
			return Arg{}, d.valueError(k, i, p, "a buffer", "")
		}
		var b *Buffer // see Buffer.self; nil for a Buffer no Device made, refused as nil
		if x != nil {
			b = x.self
		}
		if b != nil && p != nil && !aliases(p.elem, b.elem) {
			return Arg{}, d.valueError(k, i, p, "a buffer of "+goNames[b.elem], "pass b.Arg() to pass its bytes as they are")
		}
		return b.Arg(), nil
	case View:
		if p != nil && !p.pointer && p.ctype != cUnknown {
			return Arg{}, d.valueError(k, i, p, "a buffer view", "")
		}
		if x.buf != nil {
			x.buf = x.buf.self
		}
		if x.buf != nil && p != nil && !aliases(p.elem, x.buf.elem) {
			return Arg{}, d.valueError(k, i, p, "a view of a buffer of "+goNames[x.buf.elem], "pass v.Arg() to pass its bytes as they are")
		}
		return x.Arg(), nil
	case int:
		return d.signed(k, i, p, int64(x), "int", 0)
	case int8:
		return d.signed(k, i, p, int64(x), "int8", cI8)
	case int16:
		return d.signed(k, i, p, int64(x), "int16", cI16)
	case int32:
		return d.signed(k, i, p, int64(x), "int32", cI32)
	case int64:
		return d.signed(k, i, p, x, "int64", cI64)
	case uint:
		return d.unsigned(k, i, p, uint64(x), "uint", 0)
	case uint8:
		return d.unsigned(k, i, p, uint64(x), "uint8", cU8)
	case uint16:
		return d.unsigned(k, i, p, uint64(x), "uint16", cU16)
	case uint32:
		return d.unsigned(k, i, p, uint64(x), "uint32", cU32)
	case uint64:
		return d.unsigned(k, i, p, x, "uint64", cU64)
	case uintptr:
		return d.unsigned(k, i, p, uint64(x), "uintptr", 0)
	case bool:
		b := uint64(0)
		if x {
			b = 1
		}
		return d.unsigned(k, i, p, b, "bool", cBool)
	case float32:
		return d.float(k, i, p, float64(x), "float32", cF32)
	case float64:
		return d.float(k, i, p, x, "float64", cF64)
	}
	return d.named(k, i, p, v)
}

// named converts a value of a named numeric type (type Count int32) by its kind; any
// other type is an error naming it.
//
//go:noinline
func (d *Device) named(k *Kernel, i int, p *sigParam, v any) (Arg, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return Arg{}, d.valueError(k, i, p, "nil", "")
	}
	r := reflect.ValueOf(v)
	name := t.String()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return d.signed(k, i, p, r.Int(), name, goSized[t.Kind()])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return d.unsigned(k, i, p, r.Uint(), name, goSized[t.Kind()])
	case reflect.Float32, reflect.Float64:
		return d.float(k, i, p, r.Float(), name, goSized[t.Kind()])
	case reflect.Bool:
		b := uint64(0)
		if r.Bool() {
			b = 1
		}
		return d.unsigned(k, i, p, b, name, cBool)
	}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		// Go memory is not device memory: CuPy's arrays live on the device, Go's do not.
		return Arg{}, d.valueError(k, i, p, "a "+name, "upload it first (server.UploadSlice) and pass the buffer")
	}
	return Arg{}, d.valueError(k, i, p, "a "+name, "pass a number, a *server.Buffer, a server.View or a server.Arg")
}

// goSized is the HIP type a Go value of each sized kind is when the parameter's own
// type is unknown; int, uint and uintptr have none (their width is the platform's).
var goSized = map[reflect.Kind]cType{
	reflect.Int8: cI8, reflect.Int16: cI16, reflect.Int32: cI32, reflect.Int64: cI64,
	reflect.Uint8: cU8, reflect.Uint16: cU16, reflect.Uint32: cU32, reflect.Uint64: cU64,
	reflect.Float32: cF32, reflect.Float64: cF64,
}

// target is the scalar type a value for parameter p becomes: the declared one, else
// the Go value's own sized type (own), else, for int, uint and uintptr, the signed or
// unsigned integer of the width the platform reports.
func (d *Device) target(k *Kernel, i int, p *sigParam, given string, own cType, signed bool) (cType, error) {
	if p != nil && p.pointer {
		return cUnknown, d.valueError(k, i, p, given, "")
	}
	if p != nil && p.ctype != cUnknown {
		return p.ctype, nil
	}
	if own != cUnknown {
		return own, nil
	}
	if params, err := d.params(k); err == nil && i < len(params) {
		switch size := params[i].Size; {
		case size == 4 && signed:
			return cI32, nil
		case size == 4:
			return cU32, nil
		case size == 8 && signed:
			return cI64, nil
		case size == 8:
			return cU64, nil
		}
	}
	return cUnknown, d.valueError(k, i, p, given, "the parameter's type is unknown (its declaration was not read): pass a sized type (int32, uint64, ...) or a server.Arg")
}

func (d *Device) signed(k *Kernel, i int, p *sigParam, v int64, given string, own cType) (Arg, error) {
	t, err := d.target(k, i, p, given, own, true)
	if err != nil {
		return Arg{}, err
	}
	if v < 0 {
		return fromInt(k, i, p, v, given, t)
	}
	return fromUint(k, i, p, uint64(v), given, t)
}

func (d *Device) unsigned(k *Kernel, i int, p *sigParam, v uint64, given string, own cType) (Arg, error) {
	t, err := d.target(k, i, p, given, own, false)
	if err != nil {
		return Arg{}, err
	}
	return fromUint(k, i, p, v, given, t)
}

// fromInt is a negative integer as type t: refused where t cannot hold it.
func fromInt(k *Kernel, i int, p *sigParam, v int64, given string, t cType) (Arg, error) {
	switch {
	case t == cI8 && v >= math.MinInt8:
		return I8(int8(v)), nil
	case t == cI16 && v >= math.MinInt16:
		return I16(int16(v)), nil
	case t == cI32 && v >= math.MinInt32:
		return I32(int32(v)), nil
	case t == cI64:
		return I64(v), nil
	case t == cF32 || t == cF64:
		return fromWhole(k, i, p, float64(v), v == int64(float64(v)), given, t)
	}
	return Arg{}, rangeError(k, i, p, strconv.FormatInt(v, 10), given, t)
}

// fromUint is a non-negative integer as type t: refused where t cannot hold it.
func fromUint(k *Kernel, i int, p *sigParam, v uint64, given string, t cType) (Arg, error) {
	switch {
	case t == cI8 && v <= math.MaxInt8:
		return I8(int8(v)), nil
	case t == cU8 && v <= math.MaxUint8, t == cBool && v <= 1:
		return U8(uint8(v)), nil
	case t == cI16 && v <= math.MaxInt16:
		return I16(int16(v)), nil
	case t == cU16 && v <= math.MaxUint16:
		return U16(uint16(v)), nil
	case t == cI32 && v <= math.MaxInt32:
		return I32(int32(v)), nil
	case t == cU32 && v <= math.MaxUint32:
		return U32(uint32(v)), nil
	case t == cI64 && v <= math.MaxInt64:
		return I64(int64(v)), nil
	case t == cU64:
		return U64(v), nil
	case t == cF32 || t == cF64:
		f := float64(v)
		return fromWhole(k, i, p, f, f < 1<<64 && uint64(f) == v, given, t)
	}
	return Arg{}, rangeError(k, i, p, strconv.FormatUint(v, 10), given, t)
}

// fromWhole is an integer for a floating-point parameter: taken where the type holds it
// exactly (exact says float64 does), so that no digit of a count or an index is lost.
func fromWhole(k *Kernel, i int, p *sigParam, f float64, exact bool, given string, t cType) (Arg, error) {
	if exact && t == cF64 {
		return F64(f), nil
	}
	if exact && float64(float32(f)) == f {
		return F32(float32(f)), nil
	}
	return Arg{}, fmt.Errorf("launch %s: %s: %s %s is not exactly a %s (%w)", k.Entry(), p.label(i), given, strconv.FormatFloat(f, 'f', -1, 64), cNames[t], ErrInvalidArgument)
}

// float is a floating-point value for parameter p. For a float parameter a float64 is
// rounded to the nearest float, as C++ converts it and as CuPy does (the untyped 0.1 of
// a Go call is a float64); one beyond float's range, which would become infinity, is
// refused. An integer parameter takes no floating-point value: the caller says how to
// round.
func (d *Device) float(k *Kernel, i int, p *sigParam, v float64, given string, own cType) (Arg, error) {
	t, err := d.target(k, i, p, given, own, true)
	if err != nil {
		return Arg{}, err
	}
	switch t {
	case cF64:
		return F64(v), nil
	case cF32:
		f := float32(v)
		if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
			return Arg{}, rangeError(k, i, p, strconv.FormatFloat(v, 'g', -1, 64), given, t)
		}
		return F32(f), nil
	}
	return Arg{}, d.valueError(k, i, p, given, "convert it to an integer type first (the conversion says how to round)")
}

//go:noinline
func rangeError(k *Kernel, i int, p *sigParam, v, given string, t cType) error {
	return fmt.Errorf("launch %s: %s: %s %s does not fit the kernel's %s (%w)", k.Entry(), p.label(i), given, v, cNames[t], ErrInvalidArgument)
}

// valueError is a value that cannot go to parameter p at all, with a hint.
//
//go:noinline
func (d *Device) valueError(k *Kernel, i int, p *sigParam, given, hint string) error {
	takes := "a different argument"
	switch {
	case p == nil:
	case p.pointer:
		takes = "a buffer (" + p.text + ")"
	default:
		takes = p.text
	}
	if p != nil && hint == "" && p.pointer {
		hint = "pass a *server.Buffer or a server.View"
	}
	msg := fmt.Sprintf("launch %s: %s: %s given, the kernel takes %s", k.Entry(), p.label(i), given, takes)
	if p == nil {
		msg = fmt.Sprintf("launch %s: %s: %s given", k.Entry(), p.label(i), given)
	}
	if hint != "" {
		msg += ": " + hint
	}
	return fmt.Errorf("%s (%w)", msg, ErrInvalidArgument)
}
