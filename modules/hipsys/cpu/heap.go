package cpu

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

const (
	// alignment of every allocation. HIP guarantees 256 bytes; kernels vectorize on it
	// and CubeCL's pools carve pages at that granularity.
	alignment = 256
	// mmapThreshold: blocks this large come straight from mmap, so freeing them returns
	// the pages to the kernel at once (a C heap would keep them) and they start zeroed
	// and lazily committed, as a GPU driver's large allocations do.
	mmapThreshold = 1 << 20
)

// hostAlloc allocates size bytes of memory outside the Go heap, aligned to alignment.
// It must be outside the Go heap because kernels and queued copies keep raw addresses
// to it after every Go reference is gone; the garbage collector would free or move Go
// memory under them.
func hostAlloc(size uint64) (block, error) {
	reserved := (size + alignment - 1) &^ (alignment - 1)
	if size >= mmapThreshold {
		pageSize := uint64(unix.Getpagesize())
		reserved = (size + pageSize - 1) &^ (pageSize - 1)
		if reserved > uint64(^uint(0)>>1) {
			return block{}, unix.ENOMEM
		}
		m, err := unix.Mmap(-1, 0, int(reserved), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return block{}, err
		}
		return block{base: uintptr(unsafe.Pointer(&m[0])), size: size, reserved: reserved, mapped: m}, nil
	}
	// aligned_alloc wants a size that is a multiple of the alignment.
	p := C.aligned_alloc(alignment, C.size_t(reserved))
	if p == nil {
		return block{}, unix.ENOMEM
	}
	return block{base: uintptr(p), size: size, reserved: reserved}, nil
}

// shadowAlloc is initcheck's shadow of n bytes: zeroed C memory (nothing written yet), 0
// if there is none.
func shadowAlloc(n uint64) uintptr {
	return uintptr(C.calloc(C.size_t(max(n, 1)), 1))
}

// markShadow sets n bytes of a shadow at p: written.
func markShadow(p uintptr, n uint64) {
	C.memset(ptrOf(p), 1, C.size_t(n))
}

// hostRelease gives a block's memory back to the system.
func hostRelease(b block) error {
	if b.init != 0 {
		C.free(ptrOf(b.init))
	}
	if b.rz > 0 || b.init != 0 {
		// Whoever gets this memory next owns all of it (jit/shadow.go's invariants).
		jit.ClearShadow(b.span())
	}
	b.base -= uintptr(b.rz) // a checked block's allocation starts at its first redzone
	if b.mapped != nil {
		return unix.Munmap(b.mapped)
	}
	// SAFETY: b.base came from aligned_alloc in hostAlloc and was removed from its table
	// before this call, so nothing else can free it twice.
	C.free(ptrOf(b.base))
	return nil
}

// ptrOf turns an address of C memory back into a pointer. Going through a pointer-typed
// view keeps vet's uintptr check quiet; it is sound because the address is outside the
// Go heap, so no garbage collector invariant depends on it.
func ptrOf(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}

// bytesAt views n bytes at addr, which must lie in memory from hostAlloc.
func bytesAt(addr uintptr, n uint64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(ptrOf(addr)), n)
}
