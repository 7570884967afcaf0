package cpu

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// checkSide validates one side of a copy or memset, [addr, addr+size), named field in
// the error: the range must not wrap past the end of the address space, and must lie in
// one live allocation of its kind (pinned host memory when host, else device memory:
// a hipMalloc'ed block or a module variable, which must be writable when field is the
// destination). Interior pointers are fine. It allocates only when it fails.
func (p *Platform) checkSide(call, field string, host bool, addr uintptr, size uint64) error {
	if err := hipsys.CheckRange(name, call, field, addr, size); err != nil {
		return err
	}
	if !p.live(host, addr, size, field == "dst" || field == "Dst") {
		kind := "hipMalloc"
		if host {
			kind = "hipHostMalloc"
		}
		return errorf(call, hipsys.ErrorInvalidValue,
			fmt.Sprintf("%s [%#x, +%d) is not inside one live %s allocation (or writable module variable)", field, addr, size, kind))
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
	// Only blocking streams are waited for, and most programs have none (the server's
	// streams are all non-blocking): the count spares every small copy a walk over the
	// stream table and the snapshot it would allocate.
	if p.blocking.Load() > 0 {
		for _, s := range p.streams.all() {
			if s.kind == streamBlocking {
				s.drain()
			}
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
	if err := p.checkSide(call, "dst", false, uintptr(dst), size); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	fill(bytesAt(uintptr(dst), size), value)
	p.wrote(uintptr(dst), size)
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
	if err := p.checkSide(call, "dst", false, uintptr(dst), size); err != nil {
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
	if err := p.checkSide(call, "dst", false, uintptr(dst), uint64(len(src))); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	copy(bytesAt(uintptr(dst), uint64(len(src))), src)
	p.wrote(uintptr(dst), uint64(len(src)))
	return nil
}

// MemcpyDtoH copies device memory into dst (any Go memory) and returns when done.
func (p *Platform) MemcpyDtoH(dst []byte, src hipsys.DevicePtr) error {
	const call = "hipMemcpyDtoH"
	if len(dst) == 0 {
		return nil
	}
	if err := p.checkSide(call, "src", false, uintptr(src), uint64(len(dst))); err != nil {
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
	if err := p.checkSide(call, "dst", false, uintptr(dst), size); err != nil {
		return err
	}
	if err := p.checkSide(call, "src", false, uintptr(src), size); err != nil {
		return err
	}
	if err := p.beginSync(call); err != nil {
		return err
	}
	copy(bytesAt(uintptr(dst), size), bytesAt(uintptr(src), size))
	p.wrote(uintptr(dst), size)
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
	if err := p.checkSide(call, "dst", dstHost, dst, size); err != nil {
		return err
	}
	if err := p.checkSide(call, "src", srcHost, src, size); err != nil {
		return err
	}
	t := command{kind: cmdCopy, dst: dst, dstHost: dstHost, src: src, srcHost: srcHost, size: size}
	return s.enqueue(call, &t)
}
