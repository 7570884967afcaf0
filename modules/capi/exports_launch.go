package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// maxArgs bounds a launch's argument list before anything is read: HIP kernels take at
// most a 4 KiB parameter block, so more arguments than that is a host's mistake.
const maxArgs = 4096

// launchScratch is one launch's converted arguments, reused through a pool so a steady
// stream of launches allocates nothing.
type launchScratch struct {
	args []server.Arg
	// typed is, per argument, the typed buffer (cubehip_buffer_alloc_typed) it gives (the
	// zero typedArg for any other argument); empty for a launch with no typed buffer. The
	// Device checks a buffer's element type against the declared pointee only for a
	// *server.Buffer or View value of Call, so such a launch goes through Call with vals:
	// each typed buffer as its value, every other argument as its Arg, which is passed as
	// it is (an untyped buffer takes any pointer).
	typed []typedArg
	vals  []any
}

// typedArg is a typed buffer argument as Call takes it (the buffer, or a view of it),
// and its type.
type typedArg struct {
	buf   *server.Buffer
	view  server.View // where the argument has an offset
	dtype int32
}

var scratchPool = sync.Pool{New: func() any { return new(launchScratch) }}

func (s *launchScratch) reset() {
	clear(s.args) // drop the buffers' references
	s.args = s.args[:0]
	clear(s.typed)
	s.typed = s.typed[:0]
	clear(s.vals)
	s.vals = s.vals[:0]
}

// checked reports whether k's last launch through Call (the one that checks element
// types) took typed buffers of exactly these types at these positions. The check
// depends on nothing else (a kernel's declaration is fixed), so a launch that repeats
// them goes through CallArgs, which boxes no argument: a loop of typed launches
// allocates nothing, where Call would box each scalar Arg.
func (s *launchScratch) checked(k *kernel) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.typedOK || len(k.typed) != len(s.typed) {
		return false
	}
	for i, t := range s.typed {
		if k.typed[i] != t.dtype {
			return false
		}
	}
	return true
}

// passed records s's types as those k's last checked launch took.
func (s *launchScratch) passed(k *kernel) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.typed, k.typedOK = k.typed[:0], true
	for _, t := range s.typed {
		k.typed = append(k.typed, t.dtype)
	}
}

// call launches through Call, which checks the typed buffers, unless the kernel's last
// such launch took the same types.
func (s *launchScratch) call(k *kernel, launch func([]any) error, launchArgs func([]server.Arg) error) error {
	if s.checked(k) {
		return launchArgs(s.args)
	}
	err := launch(s.values())
	if err == nil {
		s.passed(k)
	}
	return err
}

// values builds vals, Call's form of the arguments.
func (s *launchScratch) values() []any {
	for i, a := range s.args {
		switch t := s.typed[i]; {
		case t.buf != nil:
			s.vals = append(s.vals, t.buf)
		case t.view.Buffer() != nil:
			s.vals = append(s.vals, t.view)
		default:
			s.vals = append(s.vals, a)
		}
	}
	return s.vals
}

// convert reads the host's arguments, in the kernel's declared order, into s. The
// Device checks them against the kernel's parameters; here only what C can get wrong
// and Go cannot: kinds that are no kind, values that do not fit their type, NULLs,
// handles that name nothing, and accesses that contradict the kernel's declaration.
func (s *launchScratch) convert(k *kernel, args *C.capi_carg, n C.size_t) error {
	if n > 0 && args == nil {
		return argError("args is NULL but arg_count is not 0")
	}
	if n > maxArgs {
		return argError(fmt.Sprintf("arg_count %d is more than a kernel can take", uint64(n)))
	}
	if n == 0 {
		return nil
	}
	nbuf := 0
	for i, a := range unsafe.Slice((*C.cubehip_arg)(unsafe.Pointer(args)), int(n)) {
		v := unsafe.Pointer(&a.v)
		var arg server.Arg
		var typed typedArg // a typed buffer's Call value (see s.typed)
		switch a.kind {
		case C.CUBEHIP_ARG_BUFFER, C.CUBEHIP_ARG_POINTER:
			var b *buffer
			var off uint64
			if a.kind == C.CUBEHIP_ARG_POINTER {
				// A raw device address: only inside a live buffer of the kernel's device,
				// which then takes the launch's writes as an argument of its own would.
				var err error
				if b, _, off, err = bufferAt(k.dev, *(*uint64)(v), fmt.Sprintf("argument %d", i)); err != nil {
					return err
				}
			} else {
				ba := (*struct {
					buffer C.cubehip_buffer
					offset C.uint64_t
				})(v)
				var err error
				if b, err = lookup[*buffer](uint64(ba.buffer.id), kindBuffer); err != nil {
					return fmt.Errorf("argument %d: %w", i, err)
				}
				if b.dev != k.dev {
					return argError(fmt.Sprintf("argument %d: buffer %s belongs to another device", i, hex(uint64(ba.buffer.id))))
				}
				off = uint64(ba.offset)
			}
			if a.access != C.CUBEHIP_ACCESS_DEFAULT {
				if nbuf >= len(k.io) || int32(a.access) != int32(k.io[nbuf]) {
					return argError(fmt.Sprintf("argument %d: access %d, where the kernel declares %s", i, a.access, declared(k.io, nbuf)))
				}
			}
			nbuf++
			size := b.b.Size()
			if off == 0 {
				arg = b.b.Arg()
				typed.buf = b.b
			} else {
				if off > size {
					return argError(fmt.Sprintf("argument %d: offset %d is past the buffer's %d bytes", i, off, size))
				}
				typed.view = b.b.View(off, size-off)
				arg = typed.view.Arg()
			}
			if typed.dtype = b.dtype; typed.dtype == 0 {
				typed = typedArg{}
			}
		case C.CUBEHIP_ARG_I8, C.CUBEHIP_ARG_I16, C.CUBEHIP_ARG_I32:
			x := *(*int64)(v)
			lo, hi, ok := signedRange(a.kind)
			if !ok || x < lo || x > hi {
				return argError(fmt.Sprintf("argument %d: %d does not fit its type (kind %d)", i, x, a.kind))
			}
			switch a.kind {
			case C.CUBEHIP_ARG_I8:
				arg = server.I8(int8(x))
			case C.CUBEHIP_ARG_I16:
				arg = server.I16(int16(x))
			default:
				arg = server.I32(int32(x))
			}
		case C.CUBEHIP_ARG_U8, C.CUBEHIP_ARG_U16, C.CUBEHIP_ARG_U32:
			x := *(*uint64)(v)
			hi := uint64(math.MaxUint32)
			switch a.kind {
			case C.CUBEHIP_ARG_U8:
				hi = math.MaxUint8
			case C.CUBEHIP_ARG_U16:
				hi = math.MaxUint16
			}
			if x > hi {
				return argError(fmt.Sprintf("argument %d: %d does not fit its type (kind %d)", i, x, a.kind))
			}
			switch a.kind {
			case C.CUBEHIP_ARG_U8:
				arg = server.U8(uint8(x))
			case C.CUBEHIP_ARG_U16:
				arg = server.U16(uint16(x))
			default:
				arg = server.U32(uint32(x))
			}
		case C.CUBEHIP_ARG_I64:
			arg = server.I64(*(*int64)(v))
		case C.CUBEHIP_ARG_U64:
			arg = server.U64(*(*uint64)(v))
		case C.CUBEHIP_ARG_F32:
			arg = server.F32(*(*float32)(v))
		case C.CUBEHIP_ARG_F64:
			arg = server.F64(*(*float64)(v))
		case C.CUBEHIP_ARG_BYTES:
			ba := (*struct {
				data        unsafe.Pointer
				size, align C.uint32_t
			})(v)
			if ba.size == 0 || ba.size > 4096 {
				return argError(fmt.Sprintf("argument %d: a struct of %d bytes (1 to 4096)", i, ba.size))
			}
			if ba.data == nil {
				return argError(fmt.Sprintf("argument %d: struct bytes are NULL", i))
			}
			if ba.align == 0 || ba.align > 256 || ba.align&(ba.align-1) != 0 {
				return argError(fmt.Sprintf("argument %d: alignment %d is not a power of two up to 256", i, ba.align))
			}
			// The Device reads the bytes during the call only.
			arg = server.Struct(unsafe.Slice((*byte)(ba.data), int(ba.size)), int(ba.align))
		case C.CUBEHIP_ARG_INFO:
			ia := (*struct {
				words *C.uint64_t
				count C.size_t
			})(v)
			if ia.count > 0 && ia.words == nil {
				return argError(fmt.Sprintf("argument %d: info words are NULL but count is not 0", i))
			}
			if ia.count > 1<<20 {
				return argError(fmt.Sprintf("argument %d: %d info words", i, uint64(ia.count)))
			}
			var words []uint64
			if ia.count > 0 {
				words = unsafe.Slice((*uint64)(unsafe.Pointer(ia.words)), int(ia.count))
			}
			arg = server.Info(words...)
		default:
			return argError(fmt.Sprintf("argument %d: kind %d is no cubehip_arg_kind", i, a.kind))
		}
		s.args = append(s.args, arg)
		if typed != (typedArg{}) || len(s.typed) > 0 {
			// From the first typed buffer on, one entry per argument; the arguments
			// before it are untyped.
			s.typed = append(s.typed, make([]typedArg, i-len(s.typed))...)
			s.typed = append(s.typed, typed)
		}
	}
	if k.inferred && nbuf != len(k.io) {
		return inferredCountError(k, nbuf)
	}
	return nil
}

// inferredCountError says why a launch's buffers do not match a kernel whose accesses
// were read from its declaration: the Device's own message counts an IO the host never
// gave. A source that does not compile (or lacks the entry) is the likelier mistake, and
// its compile error says more than a count: it is compiled first, and where it fails,
// nil lets the launch go on to the Device, which returns that error as the launch's own
// (and the stream's next sync reports it, as every failed launch's).
//
//go:noinline
func inferredCountError(k *kernel, nbuf int) error {
	if err := k.dev.d.Compile(k.k); err != nil {
		k.noteCompile(err)
		return nil
	}
	if k.code {
		// Compiled code has no declaration: the host must say each buffer's access.
		return argError(fmt.Sprintf("%d buffers given to %s, a kernel of a compiled module: give IO (desc.access, the access of each buffer)", nbuf, k.entry))
	}
	if len(k.io) == 0 {
		return argError(fmt.Sprintf("%d buffers given, and no pointer parameter was read from the declaration of %s "+
			"in desc.source (desc.access is NULL, so each buffer's access comes from the declaration: a const T* is read, "+
			"any other pointer read and written); give desc.access for a kernel declared through a macro or a typedef", nbuf, k.entry))
	}
	return argError(fmt.Sprintf("%d buffers given, and the declaration of %s in desc.source has %d pointer parameters "+
		"(desc.access is NULL, so each buffer's access comes from them); give desc.access for a kernel whose pointers "+
		"are not all buffers (the info pointer)", nbuf, k.entry, len(k.io)))
}

func signedRange(kind C.int32_t) (lo, hi int64, ok bool) {
	switch kind {
	case C.CUBEHIP_ARG_I8:
		return math.MinInt8, math.MaxInt8, true
	case C.CUBEHIP_ARG_I16:
		return math.MinInt16, math.MaxInt16, true
	case C.CUBEHIP_ARG_I32:
		return math.MinInt32, math.MaxInt32, true
	}
	return 0, 0, false
}

func declared(io []server.Access, i int) string {
	if i >= len(io) {
		return "no more buffers"
	}
	return fmt.Sprintf("access %d for buffer %d", io[i], i)
}

func launch(h C.cubehip_kernel, stream C.uint64_t, grid *C.capi_cu32, count C.cubehip_buffer, dynamic bool, args *C.capi_carg, n C.size_t) C.cubehip_status {
	k, err := lookup[*kernel](uint64(h.id), kindKernel)
	if err != nil {
		return fail(err)
	}
	s := scratchPool.Get().(*launchScratch)
	defer func() {
		s.reset()
		scratchPool.Put(s)
	}()
	if err := s.convert(k, args, n); err != nil {
		return fail(fmt.Errorf("kernel %s: %w", k.entry, err))
	}
	st, err := k.dev.stream(uint64(stream), "cubehip_launch")
	if err != nil {
		return fail(err)
	}
	if dynamic {
		cb, err := lookup[*buffer](uint64(count.id), kindBuffer)
		if err != nil {
			return fail(err)
		}
		if len(s.typed) > 0 {
			return result(s.call(k,
				func(vals []any) error { return st.CallDynamic(k.k, cb.b, vals...) },
				func(args []server.Arg) error { return st.CallDynamicArgs(k.k, cb.b, args) }))
		}
		return result(st.CallDynamicArgs(k.k, cb.b, s.args))
	}
	if grid == nil {
		return fail(argError("cubehip_launch: grid is NULL"))
	}
	g := unsafe.Slice((*uint32)(unsafe.Pointer(grid)), 3)
	if len(s.typed) > 0 {
		dim := hipsys.Dim3{X: g[0], Y: g[1], Z: g[2]}
		return result(s.call(k,
			func(vals []any) error { return st.Call(k.k, dim, vals...) },
			func(args []server.Arg) error { return st.CallArgs(k.k, dim, args) }))
	}
	return result(st.CallArgs(k.k, hipsys.Dim3{X: g[0], Y: g[1], Z: g[2]}, s.args))
}

//export cubehip_launch
func cubehip_launch(h C.cubehip_kernel, stream C.uint64_t, grid *C.capi_cu32, args *C.capi_carg, n C.size_t) C.cubehip_status {
	return launch(h, stream, grid, C.cubehip_buffer{}, false, args, n)
}

//export cubehip_launch_dynamic
func cubehip_launch_dynamic(h C.cubehip_kernel, stream C.uint64_t, count C.cubehip_buffer, args *C.capi_carg, n C.size_t) C.cubehip_status {
	return launch(h, stream, nil, count, true, args, n)
}
