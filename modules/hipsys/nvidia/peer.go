package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// peerSymbols are the driver's peer entry points, present since CUDA 4.
func peerSymbols() []dl.Entry {
	f := &C.cubehip_cu
	return []dl.Entry{
		entry(&f.deviceCanAccessPeer, "cuDeviceCanAccessPeer"),
		entry(&f.ctxEnablePeerAccess, "cuCtxEnablePeerAccess"),
		entry(&f.memcpyPeerAsync, "cuMemcpyPeerAsync"),
	}
}

// DeviceCanAccessPeer is cuDeviceCanAccessPeer. A device is not its own peer: the
// driver says so too, but the answer is given here without a call.
func (p *Platform) DeviceCanAccessPeer(device, peer int) (bool, error) {
	const call = "hipDeviceCanAccessPeer"
	if err := p.checkDevice(call, device); err != nil {
		return false, err
	}
	if err := p.checkDevice(call, peer); err != nil {
		return false, err
	}
	if device == peer {
		return false, nil
	}
	var v C.int
	if err := cuError(call, int32(C.cu_can_access_peer(&v, C.int(device), C.int(peer)))); err != nil {
		return false, err
	}
	return v != 0, nil
}

// DeviceEnablePeerAccess is cuCtxEnablePeerAccess from the current device's primary
// context to peer's: the current device's kernels and copies may then address peer's
// memory directly (over NVLink or PCIe).
func (p *Platform) DeviceEnablePeerAccess(peer int, flags uint32) error {
	const call = "hipDeviceEnablePeerAccess"
	if err := p.checkDevice(call, peer); err != nil {
		return err
	}
	if flags != 0 {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("flags %#x: must be 0", flags))
	}
	if cur, _ := p.GetDevice(); cur == peer {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidDevice, fmt.Sprintf("peer %d is the current device", peer))
	}
	return cuError(call, int32(C.cu_enable_peer(C.int(peer), C.uint(flags))))
}

// MemcpyPeerAsync is cuMemcpyPeerAsync between the two devices' primary contexts. The
// driver copies directly when access is enabled and stages through the host otherwise.
func (p *Platform) MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, s hipsys.Stream) error {
	const call = "hipMemcpyPeerAsync"
	if err := p.checkDevice(call, dstDevice); err != nil {
		return err
	}
	if err := p.checkDevice(call, srcDevice); err != nil {
		return err
	}
	if err := hipsys.CheckCopy(platformName, call, uintptr(dst), uintptr(src), size); err != nil {
		return err
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_memcpy_peer_async(C.CUdeviceptr(dst), C.int(dstDevice), C.CUdeviceptr(src), C.int(srcDevice), C.size_t(size), C.uintptr_t(s))))
}
