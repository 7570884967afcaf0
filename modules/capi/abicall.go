//go:build !cubehip_release

// The tests' bridge into the ABI (abiCall and its helpers) and the benchmarks' C loops are
// test support: the released library (scripts/build-capi.sh builds with -tags
// cubehip_release) leaves them out; `go test` keeps them.

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import "unsafe"

// abiCall makes one call of the ABI, chosen by op, with Go-typed arguments: the bridge the
// fuzz test (fuzz_test.go), which cannot name C types, drives the exported functions
// through exactly as a host would call them. A nil slice stands for a NULL pointer.
// Hosts never reach it.
func abiCall(op byte, h1, h2 uint64, n1, n2 uint64, data []byte, words []uint64, stream uint64) C.cubehip_status {
	ptr := unsafe.Pointer(nil)
	if data != nil {
		ptr = unsafe.Pointer(unsafe.SliceData(data))
	}
	dev, buf, ker := C.cubehip_device{id: C.uint64_t(h1)}, C.cubehip_buffer{id: C.uint64_t(h1)}, C.cubehip_kernel{id: C.uint64_t(h1)}
	switch op % 25 {
	case 0:
		var out C.cubehip_buffer
		return cubehip_buffer_alloc(dev, C.uint64_t(stream), C.uint64_t(n1), &out)
	case 1:
		return cubehip_buffer_release(buf)
	case 2:
		var size C.uint64_t
		return cubehip_buffer_size(buf, &size)
	case 3:
		return cubehip_buffer_write(buf, C.uint64_t(stream), C.uint64_t(n1), (*C.capi_cvoid)(ptr), C.uint64_t(n2))
	case 4:
		return cubehip_buffer_read(buf, C.uint64_t(stream), C.uint64_t(n1), ptr, C.uint64_t(n2))
	case 5:
		return cubehip_buffer_check(buf)
	case 6:
		return cubehip_buffer_sync(buf)
	case 7:
		return cubehip_device_sync(dev, C.uint64_t(stream))
	case 8:
		return cubehip_kernel_compile(ker)
	case 9:
		return cubehip_kernel_log(ker, (*C.char)(ptr), C.size_t(min(n1, uint64(len(data)))), nil)
	case 10:
		return cubehip_kernel_destroy(ker)
	case 11, 12:
		// A launch whose arguments come from the fuzzer: kinds, handles and values.
		var args []C.cubehip_arg
		for i, w := range words {
			var a C.cubehip_arg
			a.kind = C.int32_t(w % 16)
			a.access = C.int32_t(w >> 4 % 5)
			v := unsafe.Pointer(&a.v)
			switch a.kind {
			case C.CUBEHIP_ARG_BUFFER:
				*(*C.uint64_t)(v) = C.uint64_t(h2)
				*(*C.uint64_t)(unsafe.Add(v, 8)) = C.uint64_t(w >> 8 % 64)
			case C.CUBEHIP_ARG_BYTES:
				*(*unsafe.Pointer)(v) = ptr
				*(*C.uint32_t)(unsafe.Add(v, 8)) = C.uint32_t(min(uint64(len(data)), w>>8%64))
				*(*C.uint32_t)(unsafe.Add(v, 12)) = C.uint32_t(1 << (w >> 16 % 5))
			case C.CUBEHIP_ARG_INFO:
				if i%2 == 0 {
					*(*unsafe.Pointer)(v) = unsafe.Pointer(unsafe.SliceData(words))
					*(*C.size_t)(unsafe.Add(v, 8)) = C.size_t(len(words))
				} else {
					*(*C.size_t)(unsafe.Add(v, 8)) = C.size_t(w >> 8) // NULL words with a count
				}
			default:
				*(*uint64)(v) = w >> 8
			}
			args = append(args, a)
		}
		argp := (*C.capi_carg)(nil)
		if len(args) > 0 {
			argp = (*C.capi_carg)(unsafe.Pointer(&args[0]))
		}
		count := C.size_t(len(args))
		if n2%7 == 0 {
			count = C.size_t(n2) // a count that disagrees with the array
			if count > C.size_t(len(args)) {
				argp = nil
			}
		}
		if op%25 == 12 {
			return cubehip_launch_dynamic(ker, C.uint64_t(stream), C.cubehip_buffer{id: C.uint64_t(h2)}, argp, count)
		}
		grid := [3]C.uint32_t{C.uint32_t(n1), C.uint32_t(n1 >> 32), C.uint32_t(n2)}
		gp := (*C.capi_cu32)(unsafe.Pointer(&grid[0]))
		if n1 == 0 {
			gp = nil
		}
		return cubehip_launch(ker, C.uint64_t(stream), gp, argp, count)
	case 13:
		return cubehip_capture_begin(dev, C.uint64_t(stream))
	case 14:
		var g C.cubehip_graph
		return cubehip_capture_end(dev, C.uint64_t(stream), &g)
	case 15:
		return cubehip_graph_replay(C.cubehip_graph{id: C.uint64_t(h1)})
	case 16:
		return cubehip_graph_destroy(C.cubehip_graph{id: C.uint64_t(h1)})
	case 17:
		var p C.cubehip_profile
		return cubehip_profile_start(dev, C.uint64_t(stream), &p)
	case 18:
		var ns C.uint64_t
		return cubehip_profile_stop(C.cubehip_profile{id: C.uint64_t(h1)}, &ns)
	case 19:
		return cubehip_profile_abandon(C.cubehip_profile{id: C.uint64_t(h1)})
	case 20:
		u := C.cubehip_memory_usage{size: C.size_t(n1 % 64)}
		return cubehip_memory_usage_get(dev, &u)
	case 21:
		return cubehip_memory_report(dev, (*C.char)(ptr), C.size_t(min(n1, uint64(len(data)))), nil)
	case 22:
		return cubehip_memory_set_allocation_mode(dev, C.uint64_t(stream), C.int32_t(n1))
	case 24:
		if n1%2 == 0 {
			return cubehip_buffer_recycle(buf, nil)
		}
		var kept C.int32_t
		return cubehip_buffer_recycle(buf, &kept)
	default:
		var props C.cubehip_device_props
		props.size = C.size_t(n1 % 1024)
		return cubehip_device_get_properties(dev, &props)
	}
}

// abiStatus is a status as the tests hold it (a test file cannot name C types).
type abiStatus = C.cubehip_status

// abiOpen, abiClose and abiKernel are the fuzz test's fixtures: a device, and kernels on it.
func abiOpen(platform string) (uint64, C.cubehip_status) {
	cs := C.CString(platform)
	defer C.free(unsafe.Pointer(cs))
	var d C.cubehip_device
	s := cubehip_device_open((*C.capi_cchar)(cs), 0, nil, &d)
	return uint64(d.id), s
}

func abiClose(dev uint64) C.cubehip_status {
	return cubehip_device_close(C.cubehip_device{id: C.uint64_t(dev)})
}

func abiKernel(dev uint64, source, entry string, access []int32, block uint32) (uint64, C.cubehip_status) {
	src, ent := C.CString(source), C.CString(entry)
	defer C.free(unsafe.Pointer(src))
	defer C.free(unsafe.Pointer(ent))
	acc := make([]C.cubehip_access, len(access))
	for i, a := range access {
		acc[i] = C.cubehip_access(a)
	}
	d := C.cubehip_kernel_desc{size: C.sizeof_cubehip_kernel_desc, source: src, entry: ent, access_count: C.size_t(len(acc))}
	d.block = [3]C.uint32_t{C.uint32_t(block), 1, 1}
	if len(acc) > 0 {
		d.access = &acc[0]
	}
	var k C.cubehip_kernel
	s := cubehip_kernel_create(C.cubehip_device{id: C.uint64_t(dev)}, (*C.capi_ckernel_desc)(unsafe.Pointer(&d)), &k)
	return uint64(k.id), s
}

// abiStatusName is cubehip_status_string as a Go string.
func abiStatusName(s C.cubehip_status) string { return C.GoString((*C.char)(cubehip_status_string(s))) }

// lastError is cubehip_last_error as a Go string.
func lastError() string { return C.GoString(C.cubehip_last_error()) }

// newestHandle is the id of the handle registered last (the fuzz test learns the
// buffers it makes through it).
func newestHandle() uint64 {
	handles.mu.Lock()
	defer handles.mu.Unlock()
	return handles.last
}

// abiLaunchOne launches kernel over one block with one buffer argument, from Go memory
// that lives for the call only (what a steady launch loop of a host does).
func abiLaunchOne(kernel, buf uint64) C.cubehip_status {
	grid := [3]C.uint32_t{1, 1, 1}
	var a C.cubehip_arg
	a.kind = C.CUBEHIP_ARG_BUFFER
	*(*C.uint64_t)(unsafe.Pointer(&a.v)) = C.uint64_t(buf)
	return cubehip_launch(C.cubehip_kernel{id: C.uint64_t(kernel)}, 0, (*C.capi_cu32)(unsafe.Pointer(&grid[0])), (*C.capi_carg)(unsafe.Pointer(&a)), 1)
}

// abiLaunchBufferI32 launches kernel over one block with a buffer and an int32, from Go
// memory that lives for the call only, as abiLaunchOne does.
func abiLaunchBufferI32(kernel, buf uint64, v int32) C.cubehip_status {
	grid := [3]C.uint32_t{1, 1, 1}
	var a [2]C.cubehip_arg
	a[0].kind = C.CUBEHIP_ARG_BUFFER
	*(*C.uint64_t)(unsafe.Pointer(&a[0].v)) = C.uint64_t(buf)
	a[1].kind = C.CUBEHIP_ARG_I32
	*(*int64)(unsafe.Pointer(&a[1].v)) = int64(v)
	return cubehip_launch(C.cubehip_kernel{id: C.uint64_t(kernel)}, 0, (*C.capi_cu32)(unsafe.Pointer(&grid[0])), (*C.capi_carg)(unsafe.Pointer(&a[0])), 2)
}

// abiLaunchNone launches kernel, which takes no argument, over one block.
func abiLaunchNone(kernel uint64, stream uint64) C.cubehip_status {
	grid := [3]C.uint32_t{1, 1, 1}
	return cubehip_launch(C.cubehip_kernel{id: C.uint64_t(kernel)}, C.uint64_t(stream), (*C.capi_cu32)(unsafe.Pointer(&grid[0])), nil, 0)
}

// abiNativeStream is the platform's handle of device stream id (a CUstream on nvidia).
func abiNativeStream(dev, stream uint64) (uint64, C.cubehip_status) {
	var h C.uint64_t
	s := cubehip_stream_native_handle(C.cubehip_device{id: C.uint64_t(dev)}, C.uint64_t(stream), &h)
	return uint64(h), s
}

// abiAlloc allocates size bytes on the stream and returns the buffer's id.
func abiAlloc(dev, stream, size uint64) (uint64, C.cubehip_status) {
	var b C.cubehip_buffer
	s := cubehip_buffer_alloc(C.cubehip_device{id: C.uint64_t(dev)}, C.uint64_t(stream), C.uint64_t(size), &b)
	return uint64(b.id), s
}

// abiAllocTyped allocates count elements of dtype (a cubehip_dtype) on the stream and
// returns the buffer's id.
func abiAllocTyped(dev, stream uint64, dtype int32, count uint64) (uint64, C.cubehip_status) {
	var b C.cubehip_buffer
	s := cubehip_buffer_alloc_typed(C.cubehip_device{id: C.uint64_t(dev)}, C.uint64_t(stream), C.int32_t(dtype), C.uint64_t(count), &b)
	return uint64(b.id), s
}

// abiMemoryUsage is the device's bytes in use and reserved.
func abiMemoryUsage(dev uint64) ([2]uint64, C.cubehip_status) {
	u := C.cubehip_memory_usage{size: C.sizeof_cubehip_memory_usage}
	s := cubehip_memory_usage_get(C.cubehip_device{id: C.uint64_t(dev)}, &u)
	return [2]uint64{uint64(u.bytes_in_use), uint64(u.bytes_reserved)}, s
}

// abiLaunchScalars launches kernel over grid (x, 1, 1) with one buffer and the scalars
// given as (kind, bits) pairs: the message test's malformed launches.
func abiLaunchScalars(kernel, buf uint64, gridX uint32, kinds []int32, bits []uint64) C.cubehip_status {
	grid := [3]C.uint32_t{C.uint32_t(gridX), 1, 1}
	args := make([]C.cubehip_arg, 1+len(kinds))
	args[0].kind = C.CUBEHIP_ARG_BUFFER
	*(*C.uint64_t)(unsafe.Pointer(&args[0].v)) = C.uint64_t(buf)
	for i, k := range kinds {
		args[i+1].kind = C.int32_t(k)
		*(*uint64)(unsafe.Pointer(&args[i+1].v)) = bits[i]
	}
	return cubehip_launch(C.cubehip_kernel{id: C.uint64_t(kernel)}, 0, (*C.capi_cu32)(unsafe.Pointer(&grid[0])), (*C.capi_carg)(unsafe.Pointer(&args[0])), C.size_t(len(args)))
}
