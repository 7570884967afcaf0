package jit

/*
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

// Reserves n bytes at exactly at, or says why not (an errno). Kernels before 4.17 take
// MAP_FIXED_NOREPLACE as a hint and may map elsewhere: that is a refusal too.
static int cubehip_shadow_map(uint64_t at, uint64_t n) {
	void* p = mmap((void*)at, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) return errno;
	if ((uint64_t)p != at) {
		munmap(p, n);
		return EEXIST;
	}
	return 0;
}

// Sets the shadow bytes [lo, hi) to v; whole pages of zeros go back to the system
// instead of being written, so clearing a large block's shadow costs nothing it did not
// already use.
static void cubehip_shadow_fill(uint64_t lo, uint64_t hi, unsigned char v) {
	const uint64_t page = 4096;
	if (v == 0 && hi - lo >= 4 * page) {
		uint64_t plo = (lo + page - 1) & ~(page - 1), phi = hi & ~(page - 1);
		memset((void*)lo, 0, plo - lo);
		madvise((void*)plo, phi - plo, MADV_DONTNEED);
		memset((void*)phi, 0, hi - phi);
		return;
	}
	memset((void*)lo, v, hi - lo);
}

// Unpoisons the granules of the buffer [base, base+size) that [base+off, base+off+n)
// touches and whose buffer bytes are all marked written in init (a byte per byte of the
// buffer): 0 for a whole granule, k for the last one's first k bytes. Granules the range
// covers whole are written by it: only the two ends need the record read.
static void cubehip_shadow_written(uint64_t base, uint64_t size, const unsigned char* init, uint64_t off, uint64_t n, uint64_t shadow) {
	const uint64_t end = base + size, lo = base + off, hi = lo + n;
	for (uint64_t g = lo & ~(uint64_t)7; g < hi; g += 8) {
		if (g >= lo && g + 8 <= hi && g + 8 <= end) {
			uint64_t whole = ((hi < end ? hi : end) & ~(uint64_t)7);
			memset((void*)((g >> 3) + shadow), 0, (whole - g) >> 3);
			g = whole - 8;
			continue;
		}
		uint64_t b0 = g < base ? base : g, b1 = g + 8 < end ? g + 8 : end;
		int all = 1;
		for (uint64_t b = b0; b < b1 && all; b++) all = init[b - base] != 0;
		if (all) *(unsigned char*)((g >> 3) + shadow) = g + 8 <= end ? 0 : (unsigned char)(end - g);
	}
}
// fault.c's: where a fault clears the marks of the frames it cut short (0: no shadow).
extern uint64_t cubehip_shadow_offset;
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
)

// The checker's inline shadow. A module checked by memcheck or initcheck without
// racecheck (inlineShadow) is compiled with GCC's AddressSanitizer instrumentation in its
// kernel-address form, whose shadow sits at an offset the compile names: before every
// load and store the kernel reads the shadow byte of the address's 8-byte granule,
// inline, and calls the prelude's report function only where that byte is not zero.
// Device memory's redzones, quarantined blocks, device memory nothing wrote yet
// (initcheck) and the shared arena outside the block's windows are marked (poisoned)
// here and by the prelude; every other byte's shadow is zero, so the common access costs
// a load and a compare instead of a call (docs/benchmarks.md,
// "Kernel checker (2026-12-05)"). The report function then judges the access exactly,
// against the launch's region table, as the instrumented-call checks do: the shadow only
// decides when to ask. A store the judge finds writing unwritten memory marks it in the
// byte-per-byte record initcheck keeps, and once a granule's bytes are all written, its
// shadow goes back to addressable (MarkWritten, and the prelude's shadow_written).
//
// Invariants:
//   - shadowOffset and the encoding are AddressSanitizer's: the shadow of address a is the
//     byte at (a>>3)+shadowOffset; 0 means the granule's 8 bytes are addressable, k in
//     1..7 its first k, and a value with the high bit set none of them.
//   - The reservation covers the shadow of every user-space address (2^47 bytes, so
//     2^44), made once per process, never unmapped; before it exists nothing is
//     poisoned, and no inline module is compiled or loaded (shadowReady), so no
//     instrumented load reads an unmapped shadow.
//   - Only memory the checker owns is ever poisoned: a checked block's redzones, a
//     quarantined block, the shared arena's span. Whatever frees such memory clears its
//     shadow first (ClearShadow), so memory reused by anyone else reads as addressable.
//   - A poisoned byte can only cause a call of the exact judge, never a report by
//     itself: a stale mark costs time, not a false report. The reverse would hide a bug:
//     a granule is unpoisoned only once the byte record says all of its buffer bytes are
//     written, and never while its block is released or outside its buffer.
//   - The shadow of the shadow shadows no address anyone maps: the prelude keeps each
//     shared arena's marks there (cubehip_check_shared.h), one place per arena, shared
//     by every module; arenas are never unmapped, so a place never changes owner.

const (
	// shadowOffset is where the shadow starts: 64 TiB, above the Go heap's arenas and the
	// race detector's shadow and metadata, below where Linux places executables (PIE,
	// from 0x55...) and mappings (0x7f...).
	shadowOffset = 0x4000_0000_0000
	// shadowSpan is the shadow of the 47-bit user address space.
	shadowSpan = 1 << 44
	// Poison values, AddressSanitizer's: a redzone around a heap block, a freed block.
	shadowRedzone   = 0xfa
	shadowFreed     = 0xfd
	shadowUnwritten = 0xe1 // initcheck: a granule of a buffer with bytes nothing wrote (not a stack magic: 0xf1-0xf8)
)

var shadow struct {
	once sync.Once
	ok   atomic.Bool // reserved
	err  error       // why not
}

// shadowReady reserves the shadow on its first call and reports whether it is there.
// A process that cannot reserve it (strict overcommit, an address-space limit, the range
// taken) checks memory with the instrumented calls instead (checkFlags).
func shadowReady() bool {
	shadow.once.Do(func() {
		if rc := C.cubehip_shadow_map(shadowOffset, shadowSpan); rc != 0 {
			shadow.err = fmt.Errorf("memcheck's shadow (%d TiB of address space at %#x, reserved as AddressSanitizer's is): %w",
				shadowSpan>>40, shadowOffset, syscall.Errno(rc))
			return
		}
		shadow.ok.Store(true)
		C.cubehip_shadow_offset = shadowOffset // fault.c clears cut-short frames' marks from now on
	})
	return shadow.ok.Load()
}

// shadowFill sets the shadow of the granules [lo, hi) (multiples of 8) to v.
func shadowFill(lo, hi uint64, v byte) {
	if hi <= lo {
		return
	}
	C.cubehip_shadow_fill(C.uint64_t(lo>>3+shadowOffset), C.uint64_t(hi>>3+shadowOffset), C.uchar(v))
}

// PoisonBlock marks a checked block for memcheck's inline shadow: the buffer [base,
// base+size) addressable, its reservation [lo, hi) around it a redzone. lo, base and hi
// are multiples of 8. Nothing happens where the shadow could not be reserved.
func PoisonBlock(lo, base, size, hi uint64) {
	if !shadowReady() {
		return
	}
	end := base + size
	shadowFill(lo, base, shadowRedzone)
	shadowFill(base, end&^7, 0)
	if end&7 != 0 {
		// The granule the buffer ends in: its first end&7 bytes are the buffer's.
		shadowFill(end&^7, end&^7+8, byte(end&7))
		end = end&^7 + 8
	}
	shadowFill(end, hi, shadowRedzone)
}

// PoisonFreed marks a released block's buffer [base, base+size) freed (base a multiple
// of 8): it is in quarantine, and any access to it is a use after release.
func PoisonFreed(base, size uint64) {
	if !shadowReady() {
		return
	}
	shadowFill(base, (base+size+7)&^7, shadowFreed)
}

// ClearShadow marks [lo, hi) (multiples of 8) addressable again: the memory is about to
// go back to the system, and whoever gets it next owns every byte. Nothing is poisoned
// before the shadow exists, so then there is nothing to clear.
func ClearShadow(lo, hi uint64) {
	if shadow.ok.Load() {
		shadowFill(lo, hi, 0)
	}
}

// PoisonUnwritten marks a new buffer [base, base+size) (base a multiple of 8) unwritten
// for initcheck: every access to it asks the judge until what it reads was written.
func PoisonUnwritten(base, size uint64) {
	if !shadowReady() {
		return
	}
	shadowFill(base, (base+size+7)&^7, shadowUnwritten)
}

// MarkWritten unpoisons the granules of the buffer [base, base+size) that [base+off,
// base+off+n) touches and whose bytes are all written now, by init, initcheck's byte
// record of the buffer (C memory, size bytes, nonzero where written): a host copy or
// fill wrote them.
func MarkWritten(base, size uint64, init uintptr, off, n uint64) {
	if !shadow.ok.Load() || n == 0 || init == 0 {
		return
	}
	C.cubehip_shadow_written(C.uint64_t(base), C.uint64_t(size), (*C.uchar)(cPointer(init)), C.uint64_t(off), C.uint64_t(n),
		C.uint64_t(shadowOffset))
}
