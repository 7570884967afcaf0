package amd

import (
	"fmt"
	"sort"
	"sync"
)

// allocs is the set of live allocations of one kind (device memory from hipMalloc, pinned
// host memory from hipHostMalloc), sorted by base address. ROCm trusts the addresses it is
// given: a device copy to an address it never allocated is taken for host memory and
// written through, which corrupts or crashes the process. Checking each range here first
// gives hipErrorInvalidValue instead, and keeps a copy inside its allocation. Interior
// addresses are valid, since the memory pools above hand out sub-ranges of their pages.
type allocs struct {
	mu  sync.RWMutex
	rs  []span // sorted by base, disjoint
	any string // what the memory is, for messages: "device", "pinned host"
	// also is a second set a range may lie in instead (the device set's is the module
	// variables handed out by ModuleGetGlobal, which are device memory too, and theirs
	// the imported ranges); nil for none.
	also checker
}

// checker is a set of ranges a copy's range may lie in: nil when [p, p+n) does.
type checker interface {
	check(p uintptr, n uint64) error
}

type span struct{ base, end uintptr }

func (a *allocs) add(base uintptr, size uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := sort.Search(len(a.rs), func(i int) bool { return a.rs[i].base >= base })
	a.rs = append(a.rs, span{})
	copy(a.rs[i+1:], a.rs[i:])
	a.rs[i] = span{base, base + uintptr(size)}
}

// remove retires the allocation that starts at base; false when none does (an interior
// or unknown address, which hipFree rejects too).
func (a *allocs) remove(base uintptr) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := sort.Search(len(a.rs), func(i int) bool { return a.rs[i].base >= base })
	if i == len(a.rs) || a.rs[i].base != base {
		return false
	}
	a.rs = append(a.rs[:i], a.rs[i+1:]...)
	return true
}

// check is nil when [p, p+n) lies inside one live allocation, else why not. It allocates
// only on failure, so the copy path stays allocation-free.
func (a *allocs) check(p uintptr, n uint64) error {
	a.mu.RLock()
	i := sort.Search(len(a.rs), func(i int) bool { return a.rs[i].base > p }) - 1
	ok := i >= 0 && p < a.rs[i].end && n <= uint64(a.rs[i].end-p)
	var s span
	if i >= 0 {
		s = a.rs[i]
	}
	a.mu.RUnlock()
	if ok || (a.also != nil && a.also.check(p, n) == nil) {
		return nil
	}
	if i < 0 || p >= s.end {
		return fmt.Errorf("%#x is not in any live %s allocation", p, a.any)
	}
	return fmt.Errorf("%d bytes at %#x run past the end of the %s allocation at %#x (%d bytes)",
		n, p, a.any, s.base, s.end-s.base)
}

func (a *allocs) len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.rs)
}
