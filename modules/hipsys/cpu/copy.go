package cpu

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

const (
	errBadDevice = "device range is not inside one live hipMalloc allocation"
	errBadHost   = "host range is not inside one live hipHostMalloc allocation"
)

// checkDevice validates [ptr, ptr+size) as device memory for call.
func (p *Platform) checkDevice(call string, ptr uintptr, size uint64) error {
	if !p.device.contains(ptr, size) {
		return errorf(call, hipsys.ErrorInvalidValue, errBadDevice)
	}
	return nil
}

func (p *Platform) checkHost(call string, ptr uintptr, size uint64) error {
	if !p.host.contains(ptr, size) {
		return errorf(call, hipsys.ErrorInvalidValue, errBadHost)
	}
	return nil
}

// beginSync prepares a blocking copy or memset: it is illegal during a global-mode
// capture, and it runs after the work already queued on the null stream and on the
// blocking streams (those created without StreamNonBlocking), because HIP issues
// blocking copies on the null stream, which orders itself after them.
func (p *Platform) beginSync(call string) error {
	if err := p.checkUnsafe(call); err != nil {
		return err
	}
	for _, s := range p.streams.all() {
		if s.kind == streamBlocking {
			s.drain()
		}
	}
	p.nullStream().drain()
	return nil
}

// Memset fills size bytes at dst with value and returns when done. The range must lie
// in one live allocation (interior pointers are fine); size 0 does nothing.
func (p *Platform) Memset(dst hipsys.DevicePtr, value byte, size uint64) error {
	const call = "hipMemset"
	if size == 0 {
		return nil
	}
	if err := p.checkDevice(call, uintptr(dst), size); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	fill(bytesAt(uintptr(dst), size), value)
	return nil
}

// MemsetAsync queues the fill on the stream and returns at once.
func (p *Platform) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, sh hipsys.Stream) error {
	const call = "hipMemsetAsync"
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	if err := p.checkDevice(call, uintptr(dst), size); err != nil {
		return err
	}
	t := command{kind: cmdMemset, dst: uintptr(dst), size: size, value: value}
	return s.enqueue(call, &t)
}

// MemcpyHtoD copies src (any Go memory) to device memory and returns when done; src
// is not used after the call.
func (p *Platform) MemcpyHtoD(dst hipsys.DevicePtr, src []byte) error {
	const call = "hipMemcpyHtoD"
	if len(src) == 0 {
		return nil
	}
	if err := p.checkDevice(call, uintptr(dst), uint64(len(src))); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	copy(bytesAt(uintptr(dst), uint64(len(src))), src)
	return nil
}

// MemcpyDtoH copies device memory into dst (any Go memory) and returns when done.
func (p *Platform) MemcpyDtoH(dst []byte, src hipsys.DevicePtr) error {
	const call = "hipMemcpyDtoH"
	if len(dst) == 0 {
		return nil
	}
	if err := p.checkDevice(call, uintptr(src), uint64(len(dst))); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	copy(dst, bytesAt(uintptr(src), uint64(len(dst))))
	return nil
}

// MemcpyDtoD copies between device ranges and returns when done. Overlapping ranges
// copy as memmove does.
func (p *Platform) MemcpyDtoD(dst, src hipsys.DevicePtr, size uint64) error {
	const call = "hipMemcpyDtoD"
	if size == 0 {
		return nil
	}
	if err := p.checkDevice(call, uintptr(dst), size); err != nil {
		return err
	}
	if err := p.checkDevice(call, uintptr(src), size); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	copy(bytesAt(uintptr(dst), size), bytesAt(uintptr(src), size))
	return nil
}

// MemcpyHtoDAsync queues a copy from pinned host memory (HostMalloc) to device memory.
// The caller must keep src allocated and unchanged until the copy has run.
func (p *Platform) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, sh hipsys.Stream) error {
	return p.copyAsync("hipMemcpyHtoDAsync", uintptr(dst), false, uintptr(src), true, size, sh)
}

// MemcpyDtoHAsync queues a copy from device memory to pinned host memory; dst holds the
// data once the stream (or an event recorded after the copy) has completed.
func (p *Platform) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, sh hipsys.Stream) error {
	return p.copyAsync("hipMemcpyDtoHAsync", uintptr(dst), true, uintptr(src), false, size, sh)
}

// MemcpyDtoDAsync queues a copy between device ranges.
func (p *Platform) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, sh hipsys.Stream) error {
	return p.copyAsync("hipMemcpyDtoDAsync", uintptr(dst), false, uintptr(src), false, size, sh)
}

func (p *Platform) copyAsync(call string, dst uintptr, dstHost bool, src uintptr, srcHost bool, size uint64, sh hipsys.Stream) error {
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	if !p.table(dstHost).contains(dst, size) || !p.table(srcHost).contains(src, size) {
		return errorf(call, hipsys.ErrorInvalidValue, "source or destination is not inside one live allocation of its kind")
	}
	t := command{kind: cmdCopy, dst: dst, dstHost: dstHost, src: src, srcHost: srcHost, size: size}
	return s.enqueue(call, &t)
}
