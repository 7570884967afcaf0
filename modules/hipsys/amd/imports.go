package amd

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"sort"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// importSpans is the ranges ImportMemory accepted, which the device range checks accept
// as device memory. Two imports may share memory (two arrays over one tensor), so the
// ranges may overlap and each exact range counts its imports.
type importSpans struct {
	mu sync.RWMutex
	rs []importSpan // sorted by base
}

type importSpan struct {
	base, end uintptr
	refs      int
}

func (s *importSpans) add(base uintptr, size uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := base + uintptr(size)
	for i := range s.rs {
		if s.rs[i].base == base && s.rs[i].end == end {
			s.rs[i].refs++
			return
		}
	}
	i := sort.Search(len(s.rs), func(i int) bool { return s.rs[i].base > base })
	s.rs = append(s.rs, importSpan{})
	copy(s.rs[i+1:], s.rs[i:])
	s.rs[i] = importSpan{base: base, end: end, refs: 1}
}

func (s *importSpans) remove(base uintptr, size uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := base + uintptr(size)
	for i := range s.rs {
		if s.rs[i].base == base && s.rs[i].end == end {
			if s.rs[i].refs--; s.rs[i].refs == 0 {
				s.rs = append(s.rs[:i], s.rs[i+1:]...)
			}
			return true
		}
	}
	return false
}

func (s *importSpans) check(p uintptr, n uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	last := sort.Search(len(s.rs), func(i int) bool { return s.rs[i].base > p })
	for i := last - 1; i >= 0; i-- {
		if r := s.rs[i]; p < r.end && n <= uint64(r.end-p) {
			return nil
		}
	}
	return fmt.Errorf("%#x is not in any imported range", p)
}

// hipMemoryType's device value: ROCm 6 renumbered the enum (0 became "unregistered").
func (p *Platform) deviceMemoryType() C.int {
	if p.lib.major() >= 6 {
		return 2
	}
	return 1
}

// ImportMemory checks with hipPointerGetAttributes that [ptr, ptr+size) is device memory
// of the current device and, with hipMemGetAddressRange, that it lies inside one
// allocation, then adds it to the ranges the copy checks accept (ROCm itself takes an
// address it did not allocate for host memory, which is why every range is checked
// here). Host memory and unknown addresses are hipErrorInvalidValue, another device's
// memory hipErrorInvalidDevice.
func (p *Platform) ImportMemory(ptr hipsys.DevicePtr, size uint64) error {
	const call = "hipImportMemory"
	if ptr == 0 {
		return invalid(call, hipsys.ErrorInvalidValue, "ptr is null")
	}
	if size == 0 {
		return invalid(call, hipsys.ErrorInvalidValue, "size is 0")
	}
	if err := hipsys.CheckRange(name, call, "ptr", uintptr(ptr), size); err != nil {
		return err
	}
	if p.lib.s.pointerGetAttributes == nil {
		return invalid(call, hipsys.ErrorNotSupported, "this HIP runtime has no hipPointerGetAttributes to check the memory with")
	}
	var kind, dev C.int
	if r := C.amdt_pointer_attrs(p.lib.s.pointerGetAttributes, C.uintptr_t(ptr), &kind, &dev); r != 0 {
		return invalid(call, hipsys.ErrorInvalidValue, fmt.Sprintf("%#x is not memory the HIP runtime allocated (host memory, or another platform's): hipPointerGetAttributes returned %d", uint64(ptr), int(r)))
	}
	if kind != p.deviceMemoryType() {
		return invalid(call, hipsys.ErrorInvalidValue, fmt.Sprintf("%#x is not device memory (hipMemoryType %d)", uint64(ptr), int(kind)))
	}
	cur, err := p.GetDevice()
	if err != nil {
		return err
	}
	if int(dev) != cur {
		return invalid(call, hipsys.ErrorInvalidDevice, fmt.Sprintf("%#x is memory of device %d, not of the current device %d", uint64(ptr), int(dev), cur))
	}
	if p.lib.s.memGetAddressRange != nil {
		var base C.uintptr_t
		var n C.size_t
		if C.amdt_address_range(p.lib.s.memGetAddressRange, C.uintptr_t(ptr), &base, &n) == 0 {
			if off := uint64(ptr) - uint64(base); off > uint64(n) || size > uint64(n)-off {
				return invalid(call, hipsys.ErrorInvalidValue, fmt.Sprintf("[%#x, +%d) runs past the end of its allocation [%#x, +%d)", uint64(ptr), size, uint64(base), uint64(n)))
			}
		}
	}
	p.imports.add(uintptr(ptr), size)
	return nil
}

// ReleaseImportedMemory ends one ImportMemory of exactly [ptr, ptr+size).
func (p *Platform) ReleaseImportedMemory(ptr hipsys.DevicePtr, size uint64) error {
	if !p.imports.remove(uintptr(ptr), size) {
		return invalid("hipReleaseImportedMemory", hipsys.ErrorInvalidValue, fmt.Sprintf("[%#x, +%d) was not imported", uint64(ptr), size))
	}
	return nil
}
