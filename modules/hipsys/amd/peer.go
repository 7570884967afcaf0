package amd

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// DeviceCanAccessPeer is hipDeviceCanAccessPeer.
func (p *Platform) DeviceCanAccessPeer(device, peer int) (bool, error) {
	var v C.int
	if err := check("hipDeviceCanAccessPeer", C.amdt_can_access_peer(p.lib.s.deviceCanAccessPeer, &v, C.int(device), C.int(peer))); err != nil {
		return false, err
	}
	return v != 0, nil
}

// DeviceEnablePeerAccess is hipDeviceEnablePeerAccess, from the calling thread's
// current device to peer. ROCm takes flags it ignores; they are refused here so that a
// program that passes some fails on every platform alike.
func (p *Platform) DeviceEnablePeerAccess(peer int, flags uint32) error {
	const call = "hipDeviceEnablePeerAccess"
	if flags != 0 {
		return invalid(call, hipsys.ErrorInvalidValue, fmt.Sprintf("flags %#x: must be 0", flags))
	}
	return check(call, C.amdt_enable_peer(p.lib.s.deviceEnablePeerAccess, C.int(peer), C.uint(flags)))
}

// MemcpyPeerAsync is hipMemcpyPeerAsync. Both ranges are checked against the live
// device allocations first, as every other copy is, so a stale pointer is an error
// rather than a fault on the GPU.
func (p *Platform) MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, stream hipsys.Stream) error {
	const call = "hipMemcpyPeerAsync"
	if err := p.asyncCopy(call, stream, uintptr(dst), uintptr(src), size, p.device, p.device); err != nil || size == 0 {
		return err
	}
	return check(call, C.amdt_memcpy_peer_async(p.lib.s.memcpyPeerAsync, C.uintptr_t(dst), C.int(dstDevice), C.uintptr_t(src), C.int(srcDevice), C.size_t(size), C.uintptr_t(stream)))
}
