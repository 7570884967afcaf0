package cpu

import (
	"sort"
	"sync"
)

// block is one live allocation: the range a caller asked for (base, size) and what it
// costs (reserved, the rounded size charged against the device's memory).
type block struct {
	base     uintptr
	size     uint64
	reserved uint64
	mapped   []byte  // the mmap'ed region for large blocks; nil for C heap blocks
	dev      int     // the device whose hipMalloc made it (0 for pinned host memory)
	rz       uint64  // the redzone on each side, inside the allocation (check.go); 0 unchecked
	init     uintptr // initcheck's shadow: one byte per byte of the buffer, nonzero once written (C memory); 0 unchecked
}

// span is the block's whole reservation, redzones included: [lo, hi).
func (b *block) span() (lo, hi uint64) {
	return uint64(b.base - uintptr(b.rz)), uint64(b.base) + max(b.size, b.reserved) + b.rz
}

// allocTable is the set of live allocations of one kind (device or pinned host),
// sorted by base address so that any pointer, interior ones included, is checked with
// one binary search. Every pointer an API call receives goes through it: without the
// check a stale pointer would make a copy write into freed (or another caller's) memory
// and crash the process, where HIP returns hipErrorInvalidValue.
type allocTable struct {
	mu     sync.RWMutex
	blocks []block // sorted by base; ranges never overlap
	used   uint64  // sum of reserved
}

// find is the index of the block holding addr, or -1. The caller holds mu.
func (t *allocTable) find(addr uintptr) int {
	i := sort.Search(len(t.blocks), func(i int) bool { return t.blocks[i].base > addr }) - 1
	if i < 0 {
		return -1
	}
	b := &t.blocks[i]
	// A zero-size range would never contain anything; sizes are never 0 here because
	// Malloc(0) allocates nothing.
	if uint64(addr-b.base) >= b.size {
		return -1
	}
	return i
}

// contains reports whether [addr, addr+size) lies inside one live allocation. A range
// that starts inside one block and runs into the next is rejected even when the two are
// adjacent, because HIP allocations are separate objects.
func (t *allocTable) contains(addr uintptr, size uint64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := t.find(addr)
	if i < 0 {
		return false
	}
	b := &t.blocks[i]
	off := uint64(addr - b.base)
	return size <= b.size-off
}

// deviceOf is the device owning the block that holds [addr, addr+size), or -1 when no
// single live block holds the range.
func (t *allocTable) deviceOf(addr uintptr, size uint64) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := t.find(addr)
	if i < 0 || size > t.blocks[i].size-uint64(addr-t.blocks[i].base) {
		return -1
	}
	return t.blocks[i].dev
}

// isBase reports whether addr is the start of a live block.
func (t *allocTable) isBase(addr uintptr) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := t.find(addr)
	return i >= 0 && t.blocks[i].base == addr
}

// insert adds a block, keeping the order; its bytes were charged already.
func (t *allocTable) insert(b block) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := sort.Search(len(t.blocks), func(i int) bool { return t.blocks[i].base > b.base })
	t.blocks = append(t.blocks, block{})
	copy(t.blocks[i+1:], t.blocks[i:])
	t.blocks[i] = b
}

// remove takes out the block that starts exactly at base (an interior pointer is not a
// valid argument to hipFree) and returns it.
func (t *allocTable) remove(base uintptr) (block, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.find(base)
	if i < 0 || t.blocks[i].base != base {
		return block{}, false
	}
	b := t.blocks[i]
	t.blocks = append(t.blocks[:i], t.blocks[i+1:]...)
	t.used -= b.reserved
	return b, true
}

// charge reserves n bytes against limit before the memory is allocated, so that two
// concurrent Mallocs cannot both pass the check and overcommit the advertised total.
// The block's insert later carries the charge; a failed allocation gives it back with
// uncharge.
func (t *allocTable) charge(n, limit uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n > limit || t.used > limit-n {
		return false
	}
	t.used += n
	return true
}

func (t *allocTable) uncharge(n uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.used -= n
}

// usedBytes is the memory the table's blocks hold.
func (t *allocTable) usedBytes() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.used
}

// live is the number of blocks and the bytes their callers asked for.
func (t *allocTable) live() (n int, bytes uint64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i := range t.blocks {
		bytes += t.blocks[i].size
	}
	return len(t.blocks), bytes
}

// find1 reports whether addr lies inside a live block.
func (t *allocTable) find1(addr uintptr) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.find(addr) >= 0
}
