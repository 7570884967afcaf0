package server

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Arg is one kernel argument of a type it names itself: a buffer (Buffer.Arg), a
// by-value scalar of one of HIP's scalar types (I8, U8, I16, U16, I32, U32, I64, U64,
// F32, F64) or struct (Struct), or the info pointer (Info). Call takes plain Go values
// too, converted to each parameter's declared type; an Arg is passed as it is, for a
// struct, the info pointer, or a caller who says the exact type. The zero Arg is no
// argument, refused by a launch.
type Arg struct {
	buf         *Buffer
	info        []uint64
	sc          compute.Scalar
	off, length uint64 // argView: the range of buf
	kind        argKind
}

type argKind uint8

const (
	argNone argKind = iota
	argBuffer
	argScalar
	argInfo
	argView
)

// Scalar is an Arg holding a by-value scalar: Args.Scalars lists them.
type Scalar = Arg

// Arg is b as a kernel argument: the device pointer to its first byte.
func (b *Buffer) Arg() Arg { return Arg{buf: b, kind: argBuffer} }

// Info is the info pointer as a kernel argument: a device buffer holding words (the
// shapes and strides a kernel reads at run time), uploaded once per distinct content
// and then reused. It must be the kernel's last parameter, as CubeCL's kernels declare it.
func Info(words ...uint64) Arg { return Arg{info: words, kind: argInfo} }

// Scalar arguments of each HIP scalar type; the kernel's parameter must have that
// type's width (a C int is I32, a size_t U64, a float F32, a double F64) and, where its
// declaration was read, be of the same kind: an integer for an integer type, F32 or F64
// for a float or double (see Device.fit).
func I8(v int8) Arg     { return scalarArg(compute.I8(v)) }
func U8(v uint8) Arg    { return scalarArg(compute.U8(v)) }
func I16(v int16) Arg   { return scalarArg(compute.I16(v)) }
func U16(v uint16) Arg  { return scalarArg(compute.U16(v)) }
func I32(v int32) Arg   { return scalarArg(compute.I32(v)) }
func U32(v uint32) Arg  { return scalarArg(compute.U32(v)) }
func I64(v int64) Arg   { return scalarArg(compute.I64(v)) }
func U64(v uint64) Arg  { return scalarArg(compute.U64(v)) }
func F32(v float32) Arg { return scalarArg(compute.F32(v)) }
func F64(v float64) Arg { return scalarArg(compute.F64(v)) }

// Struct is a by-value struct argument: b holds its bytes as the kernel's C type lays
// them out (padding included), align is its alignment (a power of two). The launch
// reads b during the call only.
func Struct(b []byte, align int) Arg { return scalarArg(compute.Raw(b, align)) }

func scalarArg(s compute.Scalar) Arg { return Arg{sc: s, kind: argScalar} }

// what names the argument's type for an error: "a buffer", "int32", "the info pointer".
func (a Arg) what() string {
	switch a.kind {
	case argBuffer, argView:
		return "a buffer"
	case argScalar:
		return a.sc.String()
	case argInfo:
		return "the info pointer"
	}
	return "no argument (a zero Arg)"
}

// size is the argument's width in the parameter block.
func (a Arg) size() uint32 {
	if a.kind == argScalar {
		return a.sc.Size()
	}
	return 8
}

// Launch enqueues k on the stream over grid blocks of k.Block threads, with args in
// CubeCL's order (buffers, scalars, info: see Args), and returns without waiting for it.
// It is Call with the arguments in that order.
func (s Stream) Launch(k *Kernel, grid hipsys.Dim3, args Args) error {
	return s.launch(k, compute.CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}, nil, nil, callArgs{cc: &args})
}

// Call enqueues k on the stream over grid blocks of k.Block threads, with args in the
// order the kernel declares its parameters, and returns without waiting for it:
//
//	// extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
//	err := dev.Call(saxpy, server.Dim3{X: uint32(n+255) / 256}, n, float32(2), x, y)
//
// A zero Y or Z of grid is 1; a grid with X == 0 is an error: to launch nothing for an
// empty input, skip the call (see Dim3).
//
// Each argument is a plain Go value, converted to the parameter it goes to as the
// kernel's declaration in its source names it:
//
//   - a *Buffer or a View (a range of one) for a pointer parameter; the buffers, in the
//     order they appear, take the accesses of k's IO;
//   - a Go integer (int, int32, uint64, bool, a named type of one ...) for an integer
//     parameter, converted exactly: a value the C type cannot hold is an error ("argument
//     0 (n): int -1 does not fit the kernel's unsigned int");
//   - a Go integer for a float or double, when that type holds it exactly;
//   - a float32 or float64 for a float or double: a float64 is rounded to the nearest
//     float, as C++ and CuPy convert it (the untyped constant 0.1 of a Go call is a
//     float64), and refused when it is finite and beyond float's range. An integer
//     parameter takes no floating-point value: convert it, saying how to round;
//   - an Arg (I32(n), F32(a), Struct, Info, b.Arg()) to say the exact type yourself: it
//     is passed as it is, its width checked against the parameter, and its kind against
//     the declared type (no integer Arg for a float, no F32 for an int; signedness may
//     differ). A by-value struct and the info pointer are passed so.
//
// Where the declaration cannot be read (a macro, a template parameter), a value keeps
// its own Go type (int32 is a C int; int and uint take the width the platform reports),
// and the platform's list of the compiled kernel's parameters is what checks it.
//
// Call returns an error, and queues and changes nothing, for a launch that is malformed:
// a nil kernel, a released or foreign buffer, a buffer count that does not match k's
// IO, an argument that cannot go to its parameter, a count of arguments that does not
// match the kernel's, an explicit Arg whose width or kind is not the parameter's, or a launch
// configuration over the device's limits. The error names the parameter: "launch
// saxpy: argument 1 (a): a buffer given, the kernel takes float a". Everything that goes
// wrong with the work itself (a compile error, an input that carries a failure, a launch
// the driver refuses) is carried by the buffers k writes and returned by their next
// Read, Sync or Check. A compile error of a kernel that writes no buffer (one that only
// prints) has nothing to carry it: Call returns it (a *CompileError; an entry point the
// source lacks is one too), and so does the stream's next Sync.
//
// In steady state (k compiled, the buffers on this stream, the info cached) a launch
// allocates nothing. On a platform with a launch queue (nvidia; Options.DirectLaunch
// turns it off), such a launch may be issued by the queue's thread after Call returns:
// the Device's next call of any other kind waits for it first, and a refusal then
// leaves the buffers as it would have had it been seen at once.
func (s Stream) Call(k *Kernel, grid hipsys.Dim3, args ...any) error {
	return s.launch(k, compute.CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}, nil, args, callArgs{})
}

// CallArgs is Call with arguments already built as Args, in a slice the caller keeps
// (the C ABI's form: it converts each C argument itself).
func (s Stream) CallArgs(k *Kernel, grid hipsys.Dim3, args []Arg) error {
	return s.launch(k, compute.CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}, nil, nil, callArgs{list: args})
}

// LaunchDynamic is Launch with the grid read from count (three uint32: x, y, z) when
// the launch runs, after the work queued before it. A count buffer that carries a
// failure, or that cannot be read, leaves k's outputs carrying that failure. The count
// is data the host never sees, so it is taken as it is, as CubeCL takes it: a count
// with a zero dimension launches nothing.
func (s Stream) LaunchDynamic(k *Kernel, count *Buffer, args Args) error {
	if count == nil {
		return fmt.Errorf("launch: count: %w: nil buffer", ErrInvalidArgument)
	}
	return s.launch(k, compute.CubeCount{}, count, nil, callArgs{cc: &args})
}

// CallDynamic is Call with the grid read from count, as LaunchDynamic reads it.
func (s Stream) CallDynamic(k *Kernel, count *Buffer, args ...any) error {
	if count == nil {
		return fmt.Errorf("launch: count: %w: nil buffer", ErrInvalidArgument)
	}
	return s.launch(k, compute.CubeCount{}, count, args, callArgs{})
}

// CallDynamicArgs is CallDynamic with arguments already built as Args (see CallArgs).
func (s Stream) CallDynamicArgs(k *Kernel, count *Buffer, args []Arg) error {
	if count == nil {
		return fmt.Errorf("launch: count: %w: nil buffer", ErrInvalidArgument)
	}
	return s.launch(k, compute.CubeCount{}, count, nil, callArgs{list: args})
}

// callArgs is a launch's Args in the form they were given: in the kernel's order, or
// in CubeCL's (Launch). Call's Go values travel apart from them: the compiler's escape
// analysis does not tell a struct's fields apart, and what happens to the Args (kept in
// the Device's scratch) would otherwise move every boxed Go value to the heap.
type callArgs struct {
	list []Arg
	cc   *Args
}

// launchArgs is a launch's arguments sorted for the compute server, in the Device's
// scratch storage (used under its lock), so that a launch allocates nothing.
type launchArgs struct {
	order   compute.Order // Params: the kernel's order; Scalars: the scalars in it
	one     [1]compute.Scalar
	cc      []Arg // a launch in CubeCL's order as one list, for the check
	info    []uint64
	hasInfo bool
}

// gather sorts a launch's arguments (list, or the CubeCL-ordered cc) into d.bufs and
// d.args, checking each buffer. It returns the arguments in the kernel's order (list, or
// cc as one list) and whether that order differs from CubeCL's. list is never kept: a
// caller's variadic arguments then stay on its stack.
func (d *Device) gather(k *Kernel, list []Arg, cc *Args) ([]Arg, bool, error) {
	la := &d.args
	la.order.Params, la.order.Scalars = la.order.Params[:0], la.order.Scalars[:0]
	la.info, la.hasInfo = nil, false
	d.bufs = d.bufs[:0]
	if cc != nil {
		la.cc = la.cc[:0]
		for i, b := range cc.Buffers {
			if err := d.own(b, "launch"); err != nil {
				return nil, false, fmt.Errorf("launch %s: buffer %d: %w", k.Entry(), i, err)
			}
			d.bufs = append(d.bufs, b.b)
			la.cc = append(la.cc, Arg{buf: b, kind: argBuffer})
		}
		for i, a := range cc.Scalars {
			if a.kind != argScalar {
				return nil, false, fmt.Errorf("launch %s: scalar %d: %w: %s is not a scalar", k.Entry(), i, ErrInvalidArgument, a.what())
			}
			la.order.Scalars = append(la.order.Scalars, a.sc)
			la.cc = append(la.cc, a)
		}
		if cc.HasInfo || len(cc.Info) > 0 {
			la.info, la.hasInfo = cc.Info, true
			la.cc = append(la.cc, Arg{kind: argInfo})
		}
		return la.cc, false, nil
	}
	reordered, scalars := false, false // scalars: a scalar came before this buffer
	for i, a := range list {
		switch a.kind {
		case argBuffer, argView:
			b, err := d.argBinding(&list[i], "launch")
			if err != nil {
				return nil, false, fmt.Errorf("launch %s: argument %d: %w", k.Entry(), i, err)
			}
			reordered = reordered || scalars
			la.order.Params = append(la.order.Params, compute.Param{Buffer: true, Index: len(d.bufs)})
			d.bufs = append(d.bufs, b)
		case argScalar:
			scalars = true
			la.order.Params = append(la.order.Params, compute.Param{Index: len(la.order.Scalars)})
			la.order.Scalars = append(la.order.Scalars, a.sc)
		case argInfo:
			if i != len(list)-1 {
				return nil, false, fmt.Errorf("launch %s: argument %d: %w: the info pointer must be the last argument", k.Entry(), i, ErrInvalidArgument)
			}
			la.info, la.hasInfo = a.info, true
		default:
			return nil, false, fmt.Errorf("launch %s: argument %d: %w: a zero Arg", k.Entry(), i, ErrInvalidArgument)
		}
	}
	return list, reordered, nil
}

// fit checks the gathered arguments against k's parameters as the platform lists them,
// completed by the source's declaration (k.param): the count, each width, and a pointer
// where the kernel takes one. Where neither says (a platform that cannot list them and
// a declaration that was not read), the launch goes unchecked.
//
// A scalar whose parameter's declared type was read must also be of its kind: the
// platforms report sizes only, so a U32 for a float would pass the width check and the
// kernel would read its bits as a float. Every explicit Arg (Go's, and each typed
// argument of the C ABI) meets this one check; Call's plain values are converted to the
// declared type before it and always pass. Signedness is not checked: a kernel reading
// an int32's bits as unsigned gets what C's conversion of the value gives, and hosts pass
// a count as whichever their own type is. A Struct carries bytes, not a type, and stays
// the way to pass bits as they are.
func (d *Device) fit(k *Kernel, params []hipsys.KernelParam, list []Arg) error {
	if params == nil && !sure(k.sig) {
		return nil
	}
	n := len(params)
	if params == nil {
		n = len(k.sig)
	}
	if len(list) != n {
		return fmt.Errorf("launch %s: %w: the kernel takes %d arguments, %d given", k.Entry(), ErrInvalidArgument, n, len(list))
	}
	for i := range n {
		p := k.param(params, i)
		a := list[i]
		pointer := a.kind != argScalar
		switch {
		case p.Kind == hipsys.ParamPointer && !pointer:
			return argError(k, i, p, a, "a pointer (a buffer)")
		case p.Kind == hipsys.ParamValue && pointer:
			return argError(k, i, p, a, fmt.Sprintf("a %d-byte value", p.Size))
		case p.Size != 0 && p.Size != a.size():
			return argError(k, i, p, a, fmt.Sprintf("%d bytes", p.Size))
		}
		if t := k.declared(params, i); a.kind == argScalar && !ofKind(a.sc, t) {
			return argError(k, i, p, a, cNames[t])
		}
	}
	return nil
}

// declared is the scalar type the source declares k's parameter i with; cUnknown where
// it was not read, or where the declaration disagrees with the platform's list (k.param
// then trusts the platform).
func (k *Kernel) declared(params []hipsys.KernelParam, i int) cType {
	if i >= len(k.sig) || params != nil && len(params) != len(k.sig) || k.sig[i].pointer {
		return cUnknown
	}
	return k.sig[i].ctype
}

// ofKind reports whether scalar s may go to a parameter of type t: an integer to an
// integer type (bool included), a floating-point value to float or double. An unknown
// type and a struct's bytes are not checked.
func ofKind(s compute.Scalar, t cType) bool {
	switch {
	case t == cUnknown || !s.Integer() && !s.Floating():
		return true
	case t == cF32 || t == cF64:
		return s.Floating()
	}
	return s.Integer()
}

// param is k's parameter i as the platform lists it (params; nil where it cannot),
// completed from the source's declaration where the platform does not say: its name
// (the cpu device and nvidia keep none), whether it is a pointer (nvidia says sizes
// only), its size. A size of 0 is unknown.
func (k *Kernel) param(params []hipsys.KernelParam, i int) hipsys.KernelParam {
	var p hipsys.KernelParam
	if i < len(params) {
		p = params[i]
	}
	if i >= len(k.sig) || params != nil && len(params) != len(k.sig) {
		return p // a declaration read wrong says nothing about the compiled kernel
	}
	s := &k.sig[i]
	if p.Name == "" {
		p.Name = s.name
	}
	if p.Kind == hipsys.ParamUnknown {
		switch {
		case s.pointer:
			p.Kind = hipsys.ParamPointer
		case s.ctype != cUnknown:
			p.Kind = hipsys.ParamValue
		}
	}
	if params == nil {
		switch {
		case s.pointer:
			p.Size = 8
		default:
			p.Size = cSizes[s.ctype]
		}
	}
	return p
}

// sure reports whether a declaration was read well enough to check a launch by itself:
// every parameter a pointer or of a known scalar type. A parameter of another type
// may be a macro standing for several (void k(KERNEL_ARGS)), so the count is unsure.
func sure(sig []sigParam) bool {
	if sig == nil {
		return false
	}
	for _, p := range sig {
		if !p.pointer && p.ctype == cUnknown {
			return false
		}
	}
	return true
}

// cSizes are the widths of the scalar types (0: unknown).
var cSizes = [...]uint32{cI8: 1, cU8: 1, cBool: 1, cI16: 2, cU16: 2, cI32: 4, cU32: 4, cF32: 4, cI64: 8, cU64: 8, cF64: 8, cF16: 2, cBF16: 2, cUnknown: 0}

//go:noinline
func argError(k *Kernel, i int, p hipsys.KernelParam, a Arg, takes string) error {
	name := ""
	if p.Name != "" {
		name = " (" + p.Name + ")"
	}
	return fmt.Errorf("launch %s: argument %d%s: %s given, the kernel takes %s (%w)", k.Entry(), i, name, a.what(), takes, ErrInvalidArgument)
}

//go:noinline
func ioError(k *Kernel, n int) error {
	err := fmt.Errorf("launch %s: %w: the kernel declares %d buffers (its IO), %d given", k.Entry(), ErrInvalidArgument, len(k.k.IO), n)
	if k.inferred {
		// The usual cause: a pointer parameter that takes no buffer (the info pointer).
		err = fmt.Errorf("%w: the IO was inferred from the declaration's pointer parameters; give IO for a kernel whose pointers are not all buffers", err)
	}
	if k.k.Code != nil && len(k.k.IO) == 0 {
		// Compiled code declares nothing to infer the access from.
		err = fmt.Errorf("%w: a kernel of a compiled module: give IO (the access of each buffer)", err)
	}
	return err
}

// params is k's parameter list, cached per kernel: a launch after the first compares a
// pointer (or looks up a map) and asks the platform nothing.
func (d *Device) params(k *Kernel) ([]hipsys.KernelParam, error) {
	if k == d.lastK {
		return d.lastParams, nil
	}
	params, ok := d.paramsOf[k.ID()]
	if !ok {
		var err error
		if params, err = d.srv.Params(k.k); err != nil {
			return nil, err
		}
		if d.paramsOf == nil {
			d.paramsOf = make(map[compute.KernelID][]hipsys.KernelParam)
		}
		d.paramsOf[k.ID()] = params
	}
	d.lastK, d.lastParams = k, params
	return params, nil
}

func (s Stream) launch(k *Kernel, grid compute.CubeCount, count *Buffer, vals []any, args callArgs) error {
	d := s.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if !k.valid() {
		return fmt.Errorf("launch: %w: nil kernel", ErrInvalidArgument)
	}
	var static *hipsys.Dim3
	if count != nil {
		if err := d.own(count, "launch: count"); err != nil {
			return err
		}
		grid.Dynamic = &count.b
	} else {
		g := shape(hipsys.Dim3{X: grid.X, Y: grid.Y, Z: grid.Z})
		grid.Y, grid.Z = g.Y, g.Z
		static = &g
	}
	if err := d.limits.check(k, static); err != nil {
		return err
	}
	if len(d.dynShared) != 0 {
		if err := d.checkDynShared(k); err != nil {
			return err
		}
	}
	if k.k.Cooperative && static != nil {
		if err := d.checkCooperative(k, static); err != nil {
			return err
		}
	}
	var err error
	if d.trace == nil {
		err = d.launch(k, grid, s.id, vals, &args)
	} else {
		err = d.tracedLaunch(k, grid, s.id, vals, &args)
	}
	clear(d.bufs)
	clear(d.vals)
	clear(d.args.order.Scalars)
	clear(d.args.cc)
	d.args.info = nil
	return err
}

func (d *Device) launch(k *Kernel, grid compute.CubeCount, id StreamID, vals []any, args *callArgs) error {
	if k.sig == nil && !d.srv.Loaded(k.k) {
		// The entry's declaration was not found in the source: a misspelled entry, or a
		// source that does not compile, is far likelier than a kernel declared through a
		// macro, and judging the arguments against no declaration would blame them. The
		// compiler says which (the first launch compiles anyway); a kernel it loads
		// goes on to be checked against the parameters the platform lists.
		if _, err := d.params(k); err != nil && errors.Is(err, ErrCompilation) {
			return d.srv.FailLaunch(k.k, nil, id, err) // no argument was sorted: no buffer fails
		}
	}
	list := args.list
	if vals != nil {
		var err error
		if list, err = d.fromValues(k, vals); err != nil {
			return err
		}
	}
	list, reordered, err := d.gather(k, list, args.cc)
	if err != nil {
		return err
	}
	// Each argument is checked against its parameter before the buffers are counted, so
	// that a buffer where a value goes is named as such, not as one buffer too many.
	params, perr := d.params(k)
	if perr != nil {
		params = nil // the declaration alone checks the launch
	}
	if err := d.fit(k, params, list); err != nil {
		if perr != nil && !d.srv.Loaded(k.k) && errors.Is(perr, ErrCompilation) {
			// A source that does not compile says more than arguments judged against
			// its text: its error wins, and no argument was sorted, so no buffer fails.
			return d.srv.FailLaunch(k.k, nil, id, perr)
		}
		return err
	}
	if len(d.bufs) != len(k.k.IO) {
		if perr != nil && !d.srv.Loaded(k.k) && errors.Is(perr, ErrCompilation) {
			return d.srv.FailLaunch(k.k, nil, id, perr) // as above
		}
		return ioError(k, len(d.bufs))
	}
	if perr != nil && !d.srv.Loaded(k.k) {
		// A kernel that did not compile: the launch leaves its outputs carrying the
		// compile error, as every failure of the work itself, and returns it, so that
		// the first launch reports a mistake in the source. The error is the one just
		// returned: compiling again to learn it would double the cost of a failed
		// compile (g++ on the cpu device takes a tenth of a second).
		return d.srv.FailLaunch(k.k, d.bufs, id, perr)
	}
	// Parameters the platform failed to list leave the launch unchecked.
	la := &d.args
	a := compute.Args{Buffers: d.bufs, Scalars: la.order.Scalars, Info: la.info, HasInfo: la.hasInfo}
	if reordered {
		la.one[0] = compute.Ordered(&la.order)
		a.Scalars = la.one[:]
	}
	return d.srv.Launch(k.k, grid, &a, id, compute.Execute)
}

// Args are a launch's arguments in CubeCL's order, a convenience for kernels declared
// that way: the buffers (each with the access the kernel declares at its position), the
// scalars, and, when Info is non-empty or HasInfo is set, the info pointer (see Info).
// A kernel that declares its parameters in another order is launched with Stream.Call.
// Launch reads Args during the call only.
type Args struct {
	Buffers []*Buffer
	Scalars []Scalar
	Info    []uint64
	HasInfo bool
}

// tracedLaunch is launch between two trace marks, out of line so that an untraced
// launch pays one nil check.
//
//go:noinline
func (d *Device) tracedLaunch(k *Kernel, grid compute.CubeCount, id StreamID, vals []any, args *callArgs) error {
	start, ok := d.traceBegin(id)
	err := d.launch(k, grid, id, vals, args)
	switch {
	case ok && err == nil:
		d.traceEnd(id, "launch", k.Entry(), start)
	case ok: // refused: nothing ran
		d.srv.TraceRelease(start)
	}
	return err
}
