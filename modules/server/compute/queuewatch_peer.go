package compute

import "github.com/cubehip/cubehip/modules/hipsys"

// MemcpyPeerAsync queues a copy between devices on s: counted like every other copy, so
// a stream that ran one is not taken for idle.
func (w *queueWatch) MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.MemcpyPeerAsync(dst, dstDevice, src, srcDevice, size, s)
	q.end()
	return err
}
