package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"math"

	"github.com/cubehip/cubehip/modules/server"
)

// dtypes are the element types a C buffer may declare, by cubehip_dtype: the size of
// one element and the allocation that makes the Device remember the type (AllocSlice),
// so that a launch refuses the buffer for a pointer to another type as it refuses Go's.
var dtypes = map[int32]struct {
	name  string
	size  uint64
	alloc func(server.Stream, int) (*server.Buffer, error)
}{
	C.CUBEHIP_DTYPE_I8:  {"CUBEHIP_DTYPE_I8", 1, server.AllocSlice[int8]},
	C.CUBEHIP_DTYPE_U8:  {"CUBEHIP_DTYPE_U8", 1, server.AllocSlice[uint8]},
	C.CUBEHIP_DTYPE_I16: {"CUBEHIP_DTYPE_I16", 2, server.AllocSlice[int16]},
	C.CUBEHIP_DTYPE_U16: {"CUBEHIP_DTYPE_U16", 2, server.AllocSlice[uint16]},
	C.CUBEHIP_DTYPE_I32: {"CUBEHIP_DTYPE_I32", 4, server.AllocSlice[int32]},
	C.CUBEHIP_DTYPE_U32: {"CUBEHIP_DTYPE_U32", 4, server.AllocSlice[uint32]},
	C.CUBEHIP_DTYPE_I64: {"CUBEHIP_DTYPE_I64", 8, server.AllocSlice[int64]},
	C.CUBEHIP_DTYPE_U64: {"CUBEHIP_DTYPE_U64", 8, server.AllocSlice[uint64]},
	C.CUBEHIP_DTYPE_F32: {"CUBEHIP_DTYPE_F32", 4, server.AllocSlice[float32]},
	C.CUBEHIP_DTYPE_F64: {"CUBEHIP_DTYPE_F64", 8, server.AllocSlice[float64]},
}

//export cubehip_buffer_alloc_typed
func cubehip_buffer_alloc_typed(h C.cubehip_device, stream C.uint64_t, dtype C.int32_t, count C.uint64_t, out *C.cubehip_buffer) C.cubehip_status {
	const call = "cubehip_buffer_alloc_typed"
	if out == nil {
		return fail(argError(call + ": buffer is NULL"))
	}
	out.id = 0
	t, ok := dtypes[int32(dtype)]
	if !ok {
		return fail(argError(fmt.Sprintf("%s: dtype %d is no cubehip_dtype (CUBEHIP_DTYPE_I8 to CUBEHIP_DTYPE_F64; cubehip_buffer_alloc for an untyped buffer)", call, int32(dtype))))
	}
	// count*size must not wrap around: a wrapped size would allocate a small buffer the
	// host believes is large.
	if uint64(count) > math.MaxUint64/t.size || uint64(count) > math.MaxInt {
		return fail(argError(fmt.Sprintf("%s: %d elements of %d bytes is beyond any address space", call, uint64(count), t.size)))
	}
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	st, err := dev.stream(uint64(stream), call)
	if err != nil {
		return fail(err)
	}
	b, err := t.alloc(st, int(count))
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(handles.add(kindBuffer, &buffer{dev: dev, b: b, dtype: int32(dtype)}))
	return success()
}

//export cubehip_buffer_dtype
func cubehip_buffer_dtype(h C.cubehip_buffer, dtype *C.int32_t) C.cubehip_status {
	if dtype == nil {
		return fail(argError("cubehip_buffer_dtype: dtype is NULL"))
	}
	b, err := lookup[*buffer](uint64(h.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	*dtype = C.int32_t(b.dtype)
	return success()
}
