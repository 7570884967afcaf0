package cpu

import (
	"strconv"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// Malloc allocates device memory: host memory outside the Go heap, aligned to 256
// bytes, not initialized (large blocks happen to start zeroed; do not count on it).
// Size 0 gives 0 and no error, as hipMalloc. Asking for more than the device's free
// memory (MemGetInfo) is hipErrorOutOfMemory. Illegal during a global-mode capture.
func (p *Platform) Malloc(size uint64) (hipsys.DevicePtr, error) {
	const call = "hipMalloc"
	if size == 0 {
		return 0, nil
	}
	if err := p.checkUnsafe(call); err != nil {
		return 0, err
	}
	dev := p.devices.currentDevice()
	reserved := reservedSize(size)
	if !p.devices.charge(dev, reserved, p.totalMem) {
		return 0, errorf(call, hipsys.ErrorOutOfMemory, errOverBudget(size).Error())
	}
	b, err := p.alloc(&p.device, size, ^uint64(0), dev)
	if err != nil {
		p.devices.uncharge(dev, reserved)
		return 0, errorf(call, hipsys.ErrorOutOfMemory, err.Error())
	}
	return hipsys.DevicePtr(b), nil
}

// alloc charges, allocates and registers a block in t.
// The device table's limit is charged per device by the caller; dev tags the block.
func (p *Platform) alloc(t *allocTable, size, limit uint64, dev int) (uintptr, error) {
	reserved := reservedSize(size)
	if !t.charge(reserved, limit) {
		return 0, errOverBudget(size)
	}
	var rz uint64
	if t == &p.device && p.kernelChecks()&hipsys.CheckMemory != 0 {
		rz = redzone(size)
	}
	b, err := hostAlloc(size + 2*rz)
	if err != nil {
		t.uncharge(reserved)
		return 0, err
	}
	// A checked block's buffer sits between its redzones (check.go).
	b.base, b.size, b.rz = b.base+uintptr(rz), size, rz
	// hostAlloc rounds the same way; the table must uncharge exactly what was charged.
	b.reserved = reserved
	if t == &p.device && p.kernelChecks()&hipsys.CheckInit != 0 {
		if b.init = shadowAlloc(size); b.init == 0 {
			_ = hostRelease(b)
			t.uncharge(reserved)
			return 0, errOverBudget(size)
		}
	}
	b.dev = dev
	if rz > 0 {
		// memcheck's inline shadow (jit/shadow.go): the buffer addressable, its redzones not.
		lo, hi := b.span()
		jit.PoisonBlock(lo, uint64(b.base), b.size, hi)
	}
	if b.init != 0 {
		// initcheck's: nothing of the buffer written yet.
		jit.PoisonUnwritten(uint64(b.base), b.size)
	}
	t.insert(b)
	return b.base, nil
}

type errOverBudget uint64

func (e errOverBudget) Error() string {
	return strconv.FormatUint(uint64(e), 10) + " bytes exceed the device's free memory"
}

// reservedSize is what a block of size bytes is charged: the size rounded up to the
// allocation granule (the alignment, or a page for mmap'ed blocks).
func reservedSize(size uint64) uint64 {
	if size >= mmapThreshold {
		const page = 4096
		return (size + page - 1) &^ (page - 1)
	}
	return (size + alignment - 1) &^ (alignment - 1)
}

// Free releases a block from Malloc. Like hipFree it first waits for all queued work
// on every stream, so no queued copy or kernel can touch the memory after it is gone.
// Free(0) is a no-op; an unknown, interior or already freed pointer is
// hipErrorInvalidValue. Illegal during a global-mode capture.
func (p *Platform) Free(ptr hipsys.DevicePtr) error {
	return p.release("hipFree", &p.device, uintptr(ptr))
}

// HostMalloc allocates pinned host memory: C memory, which async copies may use after
// the call that queued them returns. Flags are hints with no effect on the host device.
// Size 0 gives 0 and no error.
func (p *Platform) HostMalloc(size uint64, flags hipsys.HostMallocFlags) (hipsys.HostPtr, error) {
	const call = "hipHostMalloc"
	if size == 0 {
		return 0, nil
	}
	b, err := p.alloc(&p.host, size, ^uint64(0), 0)
	if err != nil {
		return 0, errorf(call, hipsys.ErrorOutOfMemory, err.Error())
	}
	return hipsys.HostPtr(b), nil
}

// HostFree releases memory from HostMalloc, after all queued work (as hipHostFree).
// HostFree(0) is a no-op; an unknown pointer is hipErrorInvalidValue.
func (p *Platform) HostFree(ptr hipsys.HostPtr) error {
	return p.release("hipHostFree", &p.host, uintptr(ptr))
}

func (p *Platform) release(call string, t *allocTable, addr uintptr) error {
	if addr == 0 {
		return nil
	}
	if !t.isBase(addr) {
		return errorf(call, hipsys.ErrorInvalidValue, "not the start of a live allocation")
	}
	if err := p.checkUnsafe(call); err != nil {
		return err
	}
	p.waitAll()
	b, ok := t.remove(addr)
	if !ok {
		// Freed by a concurrent call while this one waited.
		return errorf(call, hipsys.ErrorInvalidValue, "not the start of a live allocation")
	}
	if t == &p.device {
		p.devices.uncharge(b.dev, b.reserved)
		if p.quarantined(b) {
			return nil
		}
	}
	if err := hostRelease(b); err != nil {
		return errorf(call, hipsys.ErrorUnknown, err.Error())
	}
	return nil
}

// waitAll waits for the work queued so far on every stream, leaving their pending
// errors for their own synchronization to report.
func (p *Platform) waitAll() {
	for _, s := range p.allStreams() {
		s.drain()
	}
}

// rangesLive checks that a copy or memset command's memory is still allocated.
func (p *Platform) rangesLive(c *command) bool {
	switch c.kind {
	case cmdMemset:
		return p.deviceRange(c.dst, c.size, true)
	case cmdCopy:
		return p.live(c.dstHost, c.dst, c.size, true) && p.live(c.srcHost, c.src, c.size, false)
	case cmdCopy2D:
		// The spans fit in 64 bits: copy2D checked them before the command was made.
		dst, _ := hipsys.Extent(c.dpitch, c.size, c.height)
		src, _ := hipsys.Extent(c.spitch, c.size, c.height)
		return p.live(c.dstHost, c.dst, dst, true) && p.live(c.srcHost, c.src, src, false)
	}
	return true
}

// live reports whether [addr, addr+size) is live memory of its kind: pinned host memory
// when host, else device memory (deviceRange).
func (p *Platform) live(host bool, addr uintptr, size uint64, write bool) bool {
	if host {
		return p.host.contains(addr, size)
	}
	return p.deviceRange(addr, size, write)
}
