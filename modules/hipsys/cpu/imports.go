package cpu

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// imported is one ImportMemory range and how many imports of exactly that range are
// live: two libraries' views of one numpy array import the same range twice, and each
// import ends on its own.
type imported struct {
	base uintptr
	size uint64
	dev  int
	refs int
}

// importTable holds the host ranges the platform was asked to treat as device memory
// though it did not allocate them. Unlike allocTable its ranges may overlap (two arrays
// sharing memory), so a lookup scans every range that starts at or before the address;
// there are few, and only copies look them up, never launches.
type importTable struct {
	mu     sync.RWMutex
	ranges []imported // sorted by base, then size
}

func (t *importTable) index(base uintptr, size uint64) int {
	return sort.Search(len(t.ranges), func(i int) bool {
		r := &t.ranges[i]
		return r.base > base || (r.base == base && r.size >= size)
	})
}

// add records one import of [base, base+size) for device dev.
func (t *importTable) add(base uintptr, size uint64, dev int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.index(base, size)
	if i < len(t.ranges) && t.ranges[i].base == base && t.ranges[i].size == size && t.ranges[i].dev == dev {
		t.ranges[i].refs++
		return
	}
	t.ranges = append(t.ranges, imported{})
	copy(t.ranges[i+1:], t.ranges[i:])
	t.ranges[i] = imported{base: base, size: size, dev: dev, refs: 1}
}

// remove ends one import of exactly [base, base+size); false when there is none.
func (t *importTable) remove(base uintptr, size uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.index(base, size)
	if i == len(t.ranges) || t.ranges[i].base != base || t.ranges[i].size != size {
		return false
	}
	if t.ranges[i].refs--; t.ranges[i].refs == 0 {
		t.ranges = append(t.ranges[:i], t.ranges[i+1:]...)
	}
	return true
}

// deviceOf is the device of an import holding all of [addr, addr+size), or -1.
func (t *importTable) deviceOf(addr uintptr, size uint64) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	end := sort.Search(len(t.ranges), func(i int) bool { return t.ranges[i].base > addr })
	for i := end - 1; i >= 0; i-- {
		r := &t.ranges[i]
		if off := uint64(addr - r.base); off <= r.size && size <= r.size-off {
			return r.dev
		}
	}
	return -1
}

// live is the number of imports in force.
func (t *importTable) live() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := 0
	for i := range t.ranges {
		n += t.ranges[i].refs
	}
	return n
}

// ImportMemory makes host memory the platform did not allocate usable as device memory
// of the current device (the cpu device's memory is host memory, so any mapped host
// range is memory its kernels can reach): copies, memsets and peer copies accept it
// until ReleaseImportedMemory. The range must be mapped in this process: an address of
// a GPU's memory, or of memory already unmapped, is refused here instead of crashing a
// copy later. A range inside another device's hipMalloc'ed block is
// hipErrorInvalidDevice, one straddling the end of a block hipErrorInvalidValue.
func (p *Platform) ImportMemory(ptr hipsys.DevicePtr, size uint64) error {
	const call = "hipImportMemory"
	addr := uintptr(ptr)
	if addr == 0 {
		return errorf(call, hipsys.ErrorInvalidValue, "ptr is null")
	}
	if size == 0 {
		return errorf(call, hipsys.ErrorInvalidValue, "size is 0")
	}
	if err := hipsys.CheckRange(name, call, "ptr", addr, size); err != nil {
		return err
	}
	dev := p.devices.currentDevice()
	if p.device.find1(addr) {
		// Memory of a hipMalloc'ed block: the whole range must stay inside the block,
		// and the block must be this device's, as on a GPU.
		switch owner := p.device.deviceOf(addr, size); {
		case owner < 0:
			return errorf(call, hipsys.ErrorInvalidValue, fmt.Sprintf("[%#x, +%d) runs past the end of the device allocation it starts in", addr, size))
		case owner != dev:
			return errorf(call, hipsys.ErrorInvalidDevice, fmt.Sprintf("[%#x, +%d) is memory of device %d, not of the current device %d", addr, size, owner, dev))
		}
	} else if err := mapped(addr, size); err != nil {
		return errorf(call, hipsys.ErrorInvalidValue, fmt.Sprintf("[%#x, +%d) is not host memory of this process (%v): the cpu device's memory is host memory", addr, size, err))
	}
	p.imports.add(addr, size, dev)
	return nil
}

// ReleaseImportedMemory ends one ImportMemory of exactly [ptr, ptr+size). It waits for
// nothing: the caller has waited for the work that used the range.
func (p *Platform) ReleaseImportedMemory(ptr hipsys.DevicePtr, size uint64) error {
	if !p.imports.remove(uintptr(ptr), size) {
		return errorf("hipReleaseImportedMemory", hipsys.ErrorInvalidValue, fmt.Sprintf("[%#x, +%d) was not imported", uintptr(ptr), size))
	}
	return nil
}

// mappedChunk is how many bytes one mincore call checks: a page of residency flags per
// call, so a check of any size needs no allocation proportional to it.
const mappedChunk = 4096 * 4096

// mapped checks with mincore(2) that every page of [addr, addr+size) is mapped: it
// fails with ENOMEM for a range that contains unmapped memory, and never touches the
// memory itself.
func mapped(addr uintptr, size uint64) error {
	const page = 4096
	var vec [mappedChunk / page]byte
	start := addr &^ (page - 1)
	end := uint64(addr) + size // CheckRange made sure it does not wrap
	for s := uint64(start); s < end; s += mappedChunk {
		n := min(end-s, mappedChunk)
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(s), uintptr(n), uintptr(unsafe.Pointer(&vec[0])))
		if errno != 0 {
			return errno
		}
	}
	return nil
}
