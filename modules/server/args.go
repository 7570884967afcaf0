package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// Arg is one kernel argument: a buffer (Buffer.Arg), a by-value scalar of one of HIP's
// scalar types (I8, U8, I16, U16, I32, U32, I64, U64, F32, F64) or struct (Struct), or
// the info pointer (Info). The zero Arg is no argument, refused by a launch.
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
// type's width (a C int is I32, a size_t U64, a float F32, a double F64).
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
	return s.launch(k, compute.CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}, nil, nil, &args)
}

// Call enqueues k on the stream over grid blocks of k.Block threads, with args in the
// order the kernel declares its parameters, and returns without waiting for it:
//
//	// extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
//	dev.Call(saxpy, grid, server.I32(n), server.F32(2), x.Arg(), y.Arg())
//
// The buffers, in the order they appear, take the accesses of k's IO.
//
// Call returns an error, and queues and changes nothing, for a launch that is malformed:
// a nil kernel, a released or foreign buffer, a buffer count that does not match k's
// IO, and, where the platform lists the compiled kernel's parameters, a count of
// arguments or an argument's width that does not match them or a buffer where the
// kernel takes a value (the error names the parameter: "launch saxpy: argument 0 (n):
// int64 given, the kernel takes 4 bytes"). Everything that goes wrong with the work
// itself (a compile error, an input that carries a failure, a launch the driver refuses)
// is carried by the buffers k writes and returned by their next Read, Sync or Check. A
// compile error of a kernel that writes no buffer (one that only prints) has nothing to
// carry it: Call returns it (a *CompileError; an entry point the source lacks is one
// too), and so does the stream's next Sync. A grid with a zero dimension enqueues
// nothing and changes nothing.
//
// In steady state (k compiled, the buffers on this stream, the info cached) a launch
// allocates nothing. On a platform with a launch queue (nvidia; Options.DirectLaunch
// turns it off), such a launch may be issued by the queue's thread after Call returns:
// the Device's next call of any other kind waits for it first, and a refusal then
// leaves the buffers as it would have had it been seen at once.
func (s Stream) Call(k *Kernel, grid hipsys.Dim3, args ...Arg) error {
	return s.launch(k, compute.CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}, nil, args, nil)
}

// LaunchDynamic is Launch with the grid read from count (three uint32: x, y, z) when
// the launch runs, after the work queued before it. A count buffer that carries a
// failure, or that cannot be read, leaves k's outputs carrying that failure.
func (s Stream) LaunchDynamic(k *Kernel, count *Buffer, args Args) error {
	if count == nil {
		return fmt.Errorf("launch: count: %w: nil buffer", ErrInvalidArgument)
	}
	return s.launch(k, compute.CubeCount{}, count, nil, &args)
}

// CallDynamic is Call with the grid read from count, as LaunchDynamic reads it.
func (s Stream) CallDynamic(k *Kernel, count *Buffer, args ...Arg) error {
	if count == nil {
		return fmt.Errorf("launch: count: %w: nil buffer", ErrInvalidArgument)
	}
	return s.launch(k, compute.CubeCount{}, count, args, nil)
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

// fit checks the gathered arguments against k's parameters as the platform lists them
// (nil: it cannot tell, and the launch goes unchecked): the count, each width, and a
// pointer where the kernel takes one. A kind the platform does not report (nvidia
// reports offsets and sizes only) is checked by width alone.
func (d *Device) fit(k *Kernel, params []hipsys.KernelParam, list []Arg) error {
	if params == nil {
		return nil
	}
	if len(list) != len(params) {
		return fmt.Errorf("launch %s: %w: the kernel takes %d arguments, %d given", k.Entry(), ErrInvalidArgument, len(params), len(list))
	}
	for i, p := range params {
		a := list[i]
		pointer := a.kind != argScalar
		switch {
		case p.Kind == hipsys.ParamPointer && !pointer:
			return argError(k, i, p, a, "a pointer (a buffer)")
		case p.Kind == hipsys.ParamValue && pointer:
			return argError(k, i, p, a, fmt.Sprintf("a %d-byte value", p.Size))
		case p.Size != a.size():
			return argError(k, i, p, a, fmt.Sprintf("%d bytes", p.Size))
		}
	}
	return nil
}

//go:noinline
func argError(k *Kernel, i int, p hipsys.KernelParam, a Arg, takes string) error {
	name := ""
	if p.Name != "" {
		name = " (" + p.Name + ")"
	}
	return fmt.Errorf("launch %s: argument %d%s: %s given, the kernel takes %s (%w)", k.Entry(), i, name, a.what(), takes, ErrInvalidArgument)
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

func (s Stream) launch(k *Kernel, grid compute.CubeCount, count *Buffer, list []Arg, cc *Args) error {
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
		static = &hipsys.Dim3{X: grid.X, Y: grid.Y, Z: grid.Z}
	}
	if err := d.limits.check(k, static); err != nil {
		return err
	}
	var err error
	if d.trace == nil {
		err = d.launch(k, grid, s.id, list, cc)
	} else {
		err = d.tracedLaunch(k, grid, s.id, list, cc)
	}
	clear(d.bufs)
	clear(d.args.order.Scalars)
	clear(d.args.cc)
	d.args.info = nil
	return err
}

func (d *Device) launch(k *Kernel, grid compute.CubeCount, id StreamID, list []Arg, cc *Args) error {
	list, reordered, err := d.gather(k, list, cc)
	if err != nil {
		return err
	}
	if len(d.bufs) != len(k.k.IO) {
		return fmt.Errorf("launch %s: %w: the kernel declares %d buffers (its IO), %d given", k.Entry(), ErrInvalidArgument, len(k.k.IO), len(d.bufs))
	}
	params, err := d.params(k)
	switch {
	case err == nil:
		if err := d.fit(k, params, list); err != nil {
			return err
		}
	case !d.srv.Loaded(k.k):
		// A kernel that did not compile is launched all the same: the launch leaves its
		// outputs carrying the compile error, as every failure of the work itself. The
		// error is the one just returned: compiling again to learn it would double the
		// cost of a failed compile (g++ on the cpu device takes a tenth of a second).
		// A kernel that writes no buffer has nothing to carry it: the error is returned.
		return d.srv.FailLaunch(k.k, d.bufs, id, err)
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
func (d *Device) tracedLaunch(k *Kernel, grid compute.CubeCount, id StreamID, list []Arg, cc *Args) error {
	start, ok := d.traceBegin(id)
	err := d.launch(k, grid, id, list, cc)
	switch {
	case ok && err == nil:
		d.traceEnd(id, "launch", k.Entry(), start)
	case ok: // refused: nothing ran
		d.srv.TraceRelease(start)
	}
	return err
}
