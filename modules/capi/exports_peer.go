package main

/*
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Several devices: peer reachability and copies of a buffer between devices.

//export cubehip_device_can_access_peer
func cubehip_device_can_access_peer(platform *C.capi_cchar, index, peer C.int32_t, out *C.int32_t) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_device_can_access_peer: out is NULL"))
	}
	*out = 0
	p, err := hipsys.Open(goString(platform))
	if err != nil {
		return fail(err)
	}
	n, err := p.GetDeviceCount()
	if err != nil {
		return fail(err)
	}
	for _, d := range []C.int32_t{index, peer} {
		if d < 0 || int(d) >= n {
			return fail(argError(fmt.Sprintf("cubehip_device_can_access_peer: device %d of platform %s, which has %d", d, p.Name(), n)))
		}
	}
	ok, err := p.DeviceCanAccessPeer(int(index), int(peer))
	if err != nil {
		return fail(err)
	}
	if ok {
		*out = 1
	}
	return success()
}

//export cubehip_device_peers
func cubehip_device_peers(h C.cubehip_device, peers *C.int32_t, capacity C.int32_t, count *C.int32_t) C.cubehip_status {
	if count == nil {
		return fail(argError("cubehip_device_peers: count is NULL"))
	}
	*count = 0
	if capacity < 0 || (capacity > 0 && peers == nil) {
		return fail(argError(fmt.Sprintf("cubehip_device_peers: %d entries at %p", capacity, peers)))
	}
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	got, err := dev.d.Peers()
	if err != nil {
		return fail(err)
	}
	*count = C.int32_t(len(got))
	if len(got) > int(capacity) {
		return fail(argError(fmt.Sprintf("cubehip_device_peers: %d peers, room for %d", len(got), capacity)))
	}
	out := unsafe.Slice(peers, len(got))
	for i, p := range got {
		out[i] = C.int32_t(p)
	}
	return success()
}

//export cubehip_buffer_copy_from
func cubehip_buffer_copy_from(dst C.cubehip_buffer, stream C.uint64_t, src C.cubehip_buffer) C.cubehip_status {
	d, err := lookup[*buffer](uint64(dst.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	s, err := lookup[*buffer](uint64(src.id), kindBuffer)
	if err != nil {
		return fail(err)
	}
	st, err := d.dev.stream(uint64(stream), "cubehip_buffer_copy_from")
	if err != nil {
		return fail(err)
	}
	return result(st.CopyFrom(d.b, s.b))
}
