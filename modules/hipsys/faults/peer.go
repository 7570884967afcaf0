package faults

import "github.com/cubehip/cubehip/modules/hipsys"

// Peer calls, checked like every other: a fired rule returns before the wrapped
// platform is reached.

func (w *Platform) DeviceCanAccessPeer(device, peer int) (bool, error) {
	if err := w.check(cDeviceCanAccessPeer); err != nil {
		return false, err
	}
	return w.inner.DeviceCanAccessPeer(device, peer)
}

func (w *Platform) DeviceEnablePeerAccess(peer int, flags uint32) error {
	if err := w.check(cDeviceEnablePeerAccess); err != nil {
		return err
	}
	return w.inner.DeviceEnablePeerAccess(peer, flags)
}

func (w *Platform) MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, stream hipsys.Stream) error {
	if err := w.check(cMemcpyPeerAsync); err != nil {
		return err
	}
	return w.inner.MemcpyPeerAsync(dst, dstDevice, src, srcDevice, size, stream)
}
