package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -I${SRCDIR}
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// Library version: MAJOR*10000 + MINOR*100 + PATCH, the same as include/cubehip.h's.
const version = 0*10000 + 1*100 + 0

//export cubehip_version
func cubehip_version() C.uint32_t { return version }

// goString copies a C string; NULL is "".
func goString(s *C.capi_cchar) string {
	if s == nil {
		return ""
	}
	return C.GoString((*C.char)(s))
}

//export cubehip_device_count
func cubehip_device_count(platform *C.capi_cchar, count *C.int32_t) C.cubehip_status {
	if count == nil {
		return fail(argError("cubehip_device_count: count is NULL"))
	}
	*count = 0
	p, err := hipsys.Open(goString(platform))
	if err != nil {
		// An absent library or a platform with no device is an answer, not a failure:
		// 0 devices, and the reason kept for a host that wants it: the one success
		// that leaves a message (include/cubehip.h says so).
		fail(err)
		return statusSuccess
	}
	n, err := p.GetDeviceCount()
	if err != nil {
		fail(err)
		return statusSuccess
	}
	*count = C.int32_t(n)
	return success()
}

//export cubehip_device_properties
func cubehip_device_properties(platform *C.capi_cchar, index C.int32_t, props *C.cubehip_device_props) C.cubehip_status {
	if err := checkProps(props); err != nil {
		return fail(err)
	}
	p, err := hipsys.Open(goString(platform))
	if err != nil {
		return fail(err)
	}
	n, err := p.GetDeviceCount()
	if err != nil {
		return fail(err)
	}
	if index < 0 || int(index) >= n {
		return fail(argError(fmt.Sprintf("cubehip_device_properties: device %d of platform %s, which has %d", index, p.Name(), n)))
	}
	pr, err := p.GetDeviceProperties(int(index))
	if err != nil {
		return fail(err)
	}
	fillProps(props, p.Name(), pr)
	return success()
}

func checkProps(props *C.cubehip_device_props) error {
	if props == nil {
		return argError("props is NULL")
	}
	if props.size < C.size_t(unsafe.Offsetof(props.integrated)+unsafe.Sizeof(props.integrated)) {
		return argError(fmt.Sprintf("props.size is %d: set it to sizeof(cubehip_device_props)", props.size))
	}
	return nil
}

// fillProps writes the fields a header of props.size bytes knows: a caller built with an
// older header has a smaller struct, and nothing past its size may be written.
func fillProps(dst *C.cubehip_device_props, platform string, p hipsys.DeviceProps) {
	props := &C.cubehip_device_props{size: dst.size}
	defer func() {
		n := min(uintptr(dst.size), unsafe.Sizeof(*props))
		copy(unsafe.Slice((*byte)(unsafe.Pointer(dst)), n), unsafe.Slice((*byte)(unsafe.Pointer(props)), n))
	}()
	putString(props.platform[:], platform)
	putString(props.name[:], p.Name)
	putString(props.arch[:], p.ArchName)
	props.total_mem = C.uint64_t(p.TotalMem)
	props.shared_mem_per_block = C.uint64_t(p.SharedMemPerBlock)
	props.warp_size = C.int32_t(p.WarpSize)
	props.multiprocessor_count = C.int32_t(p.MultiProcessorCount)
	props.clock_rate_khz = C.int32_t(p.ClockRateKHz)
	props.max_threads_per_block = C.int32_t(p.MaxThreadsPerBlock)
	for i := range 3 {
		props.max_threads_dim[i] = C.int32_t(p.MaxThreadsDim[i])
		props.max_grid_size[i] = C.int32_t(p.MaxGridSize[i])
	}
	props.major, props.minor = C.int32_t(p.Major), C.int32_t(p.Minor)
	props.pci_bus_id, props.pci_device_id, props.pci_domain_id = C.int32_t(p.PCIBusID), C.int32_t(p.PCIDeviceID), C.int32_t(p.PCIDomainID)
	if p.Integrated {
		props.integrated = 1
	}
	props.shared_mem_per_block_optin = C.uint64_t(p.SharedMemPerBlockOptin)
}

// putString copies s into a fixed C array, truncated and NUL-terminated.
func putString(dst []C.char, s string) {
	n := min(len(s), len(dst)-1)
	for i := range n {
		dst[i] = C.char(s[i])
	}
	dst[n] = 0
}

// putOut writes s into the host's (buf, cap) with snprintf's contract and stores the full
// length in *length when it is not NULL.
func putOut(s string, buf *C.char, capacity C.size_t, length *C.size_t) error {
	if buf == nil && capacity > 0 {
		return argError("buf is NULL but cap is not 0")
	}
	if length != nil {
		*length = C.size_t(len(s))
	}
	if capacity == 0 {
		return nil
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(capacity))
	n := copy(dst[:len(dst)-1], s)
	dst[n] = 0
	return nil
}

//export cubehip_device_open
func cubehip_device_open(platform *C.capi_cchar, index C.int32_t, options *C.capi_cdevice_options, out *C.cubehip_device) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_device_open: device is NULL"))
	}
	out.id = 0
	syncEnviron() // the host may have set CUBEHIP_* since the library was loaded (environ.go)
	opts := server.Options{Platform: goString(platform), Index: int(index)}
	if options != nil {
		if options.size < C.size_t(unsafe.Offsetof(options.direct_launch)+unsafe.Sizeof(options.direct_launch)) {
			return fail(argError(fmt.Sprintf("cubehip_device_open: options.size is %d: set it to sizeof(cubehip_device_options)", options.size)))
		}
		opts.MaxStreams = int(options.max_streams)
		opts.CacheDir = goString(options.cache_dir)
		opts.StagingChunk = uint64(options.staging_chunk)
		opts.StagingDepth = int(options.staging_depth)
		opts.DirectLaunch = options.direct_launch != 0
		if options.size >= C.size_t(unsafe.Offsetof(options.check)+unsafe.Sizeof(options.check)) && options.check != nil {
			c, err := hipsys.ParseChecks(goString(options.check))
			if err != nil {
				return fail(argError("cubehip_device_open: options.check: " + err.Error()))
			}
			opts.Check = c
		}
	}
	d, err := server.Open(opts)
	if err != nil {
		return fail(err)
	}
	dev := &device{d: d}
	dev.caps.streams = uint64(server.DefaultMaxStreams)
	if opts.MaxStreams > 0 {
		dev.caps.streams = uint64(opts.MaxStreams)
	}
	dev.id = handles.add(kindDevice, dev)
	out.id = C.uint64_t(dev.id)
	return success()
}

//export cubehip_device_close
func cubehip_device_close(h C.cubehip_device) C.cubehip_status {
	obj, ok := handles.remove(uint64(h.id), kindDevice)
	if !ok {
		return fail(handleError{k: kindDevice, id: uint64(h.id)})
	}
	dev := obj.(*device)
	dev.trim.stop()
	// The device's objects go first, so no call can reach a handle of a device in the
	// middle of closing; calls already past their lookup meet the Device's own
	// ErrClosed.
	handles.removeIf(func(obj any) bool { return ownerOf(obj) == dev })
	return result(dev.d.Close())
}

//export cubehip_device_get_properties
func cubehip_device_get_properties(h C.cubehip_device, props *C.cubehip_device_props) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	if err := checkProps(props); err != nil {
		return fail(err)
	}
	fillProps(props, dev.d.Platform(), dev.d.Props())
	return success()
}

//export cubehip_device_sync
func cubehip_device_sync(h C.cubehip_device, stream C.uint64_t) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	st, err := dev.stream(uint64(stream), "cubehip_device_sync")
	if err != nil {
		return fail(err)
	}
	return result(st.Sync())
}
