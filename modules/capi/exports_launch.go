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
	args server.Args
	info []uint64
}

var scratchPool = sync.Pool{New: func() any { return new(launchScratch) }}

func (s *launchScratch) reset() {
	clear(s.args.Buffers)
	s.args.Buffers = s.args.Buffers[:0]
	s.args.Scalars = s.args.Scalars[:0]
	s.args.Info = nil
	s.args.HasInfo = false
	s.info = s.info[:0]
}

// convert reads the host's arguments into s.
func (s *launchScratch) convert(dev *device, args *C.capi_carg, n C.size_t) error {
	if n > 0 && args == nil {
		return argError("args is NULL but arg_count is not 0")
	}
	if n > maxArgs {
		return argError(fmt.Sprintf("arg_count %d is more than a kernel can take", uint64(n)))
	}
	if n == 0 {
		return nil
	}
	phase := 0 // 0 buffers, 1 scalars, 2 info: the order the Device takes today
	for i, a := range unsafe.Slice((*C.cubehip_arg)(unsafe.Pointer(args)), int(n)) {
		v := unsafe.Pointer(&a.v)
		var want int
		switch a.kind {
		case C.CUBEHIP_ARG_BUFFER:
			want = 0
			ba := (*struct {
				buffer C.cubehip_buffer
				offset C.uint64_t
			})(v)
			b, err := lookup[*buffer](uint64(ba.buffer.id), kindBuffer)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i, err)
			}
			if b.dev != dev {
				return argError(fmt.Sprintf("argument %d: buffer %s belongs to another device", i, hex(uint64(ba.buffer.id))))
			}
			if ba.offset != 0 {
				return argError(fmt.Sprintf("argument %d: a buffer at an offset needs buffer views", i))
			}
			s.args.Buffers = append(s.args.Buffers, b.b)
		case C.CUBEHIP_ARG_I32:
			want = 1
			x := *(*int64)(v)
			if x < math.MinInt32 || x > math.MaxInt32 {
				return argError(fmt.Sprintf("argument %d: %d does not fit an int32", i, x))
			}
			s.args.Scalars = append(s.args.Scalars, server.I32(int32(x)))
		case C.CUBEHIP_ARG_U32:
			want = 1
			x := *(*uint64)(v)
			if x > math.MaxUint32 {
				return argError(fmt.Sprintf("argument %d: %d does not fit a uint32", i, x))
			}
			s.args.Scalars = append(s.args.Scalars, server.U32(uint32(x)))
		case C.CUBEHIP_ARG_I64:
			want = 1
			s.args.Scalars = append(s.args.Scalars, server.I64(*(*int64)(v)))
		case C.CUBEHIP_ARG_U64:
			want = 1
			s.args.Scalars = append(s.args.Scalars, server.U64(*(*uint64)(v)))
		case C.CUBEHIP_ARG_F32:
			want = 1
			s.args.Scalars = append(s.args.Scalars, server.F32(*(*float32)(v)))
		case C.CUBEHIP_ARG_F64:
			want = 1
			s.args.Scalars = append(s.args.Scalars, server.F64(*(*float64)(v)))
		case C.CUBEHIP_ARG_INFO:
			want = 2
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
			if ia.count > 0 {
				s.info = append(s.info, unsafe.Slice((*uint64)(unsafe.Pointer(ia.words)), int(ia.count))...)
			}
			s.args.Info, s.args.HasInfo = s.info, true
		case C.CUBEHIP_ARG_I8, C.CUBEHIP_ARG_U8, C.CUBEHIP_ARG_I16, C.CUBEHIP_ARG_U16, C.CUBEHIP_ARG_BYTES:
			return argError(fmt.Sprintf("argument %d: kind %d is not supported by this library yet", i, a.kind))
		default:
			return argError(fmt.Sprintf("argument %d: kind %d is no cubehip_arg_kind", i, a.kind))
		}
		if want < phase {
			return argError(fmt.Sprintf("argument %d: this library takes buffers, then scalars, then the info words", i))
		}
		phase = want
	}
	return nil
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
	if err := s.convert(k.dev, args, n); err != nil {
		return fail(fmt.Errorf("cubehip_launch %q: %w", k.k.Entry, err))
	}
	st := k.dev.d.On(server.StreamID(stream))
	if dynamic {
		cb, err := lookup[*buffer](uint64(count.id), kindBuffer)
		if err != nil {
			return fail(err)
		}
		return result(st.LaunchDynamic(k.k, cb.b, s.args))
	}
	if grid == nil {
		return fail(argError("cubehip_launch: grid is NULL"))
	}
	g := unsafe.Slice((*uint32)(unsafe.Pointer(grid)), 3)
	return result(st.Launch(k.k, hipsys.Dim3{X: g[0], Y: g[1], Z: g[2]}, s.args))
}

//export cubehip_launch
func cubehip_launch(h C.cubehip_kernel, stream C.uint64_t, grid *C.capi_cu32, args *C.capi_carg, n C.size_t) C.cubehip_status {
	return launch(h, stream, grid, C.cubehip_buffer{}, false, args, n)
}

//export cubehip_launch_dynamic
func cubehip_launch_dynamic(h C.cubehip_kernel, stream C.uint64_t, count C.cubehip_buffer, args *C.capi_carg, n C.size_t) C.cubehip_status {
	return launch(h, stream, nil, count, true, args, n)
}
