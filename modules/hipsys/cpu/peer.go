package cpu

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// DeviceCanAccessPeer is true for any two distinct devices: they all live in the host's
// memory. A device is not its own peer, as in HIP.
func (p *Platform) DeviceCanAccessPeer(device, peer int) (bool, error) {
	const call = "hipDeviceCanAccessPeer"
	if !p.devices.valid(device) {
		return false, p.invalidDevice(call, device)
	}
	if !p.devices.valid(peer) {
		return false, p.invalidDevice(call, peer)
	}
	return device != peer, nil
}

// DeviceEnablePeerAccess records that the current device may access peer's memory.
// The host needs no mapping, but the rules are HIP's, so code that breaks them here
// breaks on a GPU too: flags must be 0, peer must be another valid device, and a pair
// is enabled once.
func (p *Platform) DeviceEnablePeerAccess(peer int, flags uint32) error {
	const call = "hipDeviceEnablePeerAccess"
	if flags != 0 {
		return errorf(call, hipsys.ErrorInvalidValue, fmt.Sprintf("flags %#x: must be 0", flags))
	}
	cur := p.devices.currentDevice()
	if !p.devices.valid(peer) || peer == cur {
		return errorf(call, hipsys.ErrorInvalidDevice, fmt.Sprintf("peer %d of %d from current device %d", peer, p.devices.n, cur))
	}
	d := &p.devices
	d.mu.Lock()
	defer d.mu.Unlock()
	key := [2]int{cur, peer}
	if d.enabled[key] {
		return errorf(call, hipsys.ErrorPeerAccessAlreadyEnabled, fmt.Sprintf("device %d to %d", cur, peer))
	}
	d.enabled[key] = true
	return nil
}

// MemcpyPeerAsync queues the copy on stream like MemcpyDtoDAsync, after checking that
// each pointer belongs to the device it is said to: a pointer of another device is
// hipErrorInvalidValue, because on a GPU the copy engine would read or write the wrong
// memory.
func (p *Platform) MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, sh hipsys.Stream) error {
	const call = "hipMemcpyPeerAsync"
	if !p.devices.valid(dstDevice) {
		return p.invalidDevice(call, dstDevice)
	}
	if !p.devices.valid(srcDevice) {
		return p.invalidDevice(call, srcDevice)
	}
	if size > 0 {
		if err := p.checkOwner(call, "dst", uintptr(dst), size, dstDevice); err != nil {
			return err
		}
		if err := p.checkOwner(call, "src", uintptr(src), size, srcDevice); err != nil {
			return err
		}
	}
	return p.copyAsync(call, uintptr(dst), false, uintptr(src), false, size, sh)
}

// checkOwner checks that [addr, addr+size) is device memory of dev.
func (p *Platform) checkOwner(call, field string, addr uintptr, size uint64, dev int) error {
	if err := p.checkSide(call, field, false, addr, size); err != nil {
		return err
	}
	owner := p.device.deviceOf(addr, size)
	if owner < 0 {
		owner = p.imports.deviceOf(addr, size)
	}
	if owner != dev {
		return errorf(call, hipsys.ErrorInvalidValue, fmt.Sprintf("%s %#x is memory of device %d, not %d", field, addr, owner, dev))
	}
	return nil
}
