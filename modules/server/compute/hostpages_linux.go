package compute

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// A read into memory no one has touched yet (a new Go slice the OS hands over, a fresh
// numpy array, a malloc'ed C buffer of that size) faults in each 4 KiB page as the copy
// first writes it, and the kernel's per-page cost then bounds the read well below the
// host's memcpy rate, however many threads copy. Where the kernel gives transparent
// huge pages to memory that asks for them (mode "madvise", the common default), such a
// destination is advised MADV_HUGEPAGE first: one fault maps 2 MiB.
//
// Only whole huge-page blocks none of whose pages is resident are advised: memory in
// use keeps whatever layout its owner chose, and advice on it would only make the
// kernel's background collapse work on it. In mode "always" fresh memory gets huge
// pages without advice; in "never" advice does nothing: both skip it.
//
// The advised blocks are then faulted in at once, spread over the host's cores, before
// the host copies into them: the copy that follows writes resident memory. Left to the
// copy itself, the faults came from the goroutines of a chunk's host copy, whose 1 MiB
// parts split each 2 MiB page between two of them, one waiting while the other's fault
// cleared the page. Each page is faulted by an atomic add of zero to its first word: one
// write fault, and no byte changes whatever the memory held (file-backed or swapped-out
// pages also read as not resident). MADV_POPULATE_WRITE, the kernel's own call for this,
// is several times slower than these touches (docs/benchmarks.md, "Fresh destinations
// faulted in").

// adviseMin is the smallest destination worth the residency check (a system call).
const adviseMin = 8 << 20

// hugeAdvice is what adviseFresh needs, read once: the huge page size when the kernel
// wants advice (0 when it does not), the base page size and a block's worth of zeros.
var hugeAdvice = sync.OnceValue(func() (a struct {
	huge, page uintptr
	zeros      []byte
}) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return a
	}
	size, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return a
	}
	huge, err := strconv.ParseUint(strings.TrimSpace(string(size)), 10, 64)
	page := uint64(os.Getpagesize())
	if err != nil || huge <= page || huge%page != 0 {
		return a
	}
	a.huge, a.page = uintptr(huge), uintptr(page)
	a.zeros = make([]byte, huge/page)
	return a
})

// adviseFresh advises MADV_HUGEPAGE the huge-page blocks inside dst that no page of is
// resident yet, then faults them in (populate). It changes no byte, and a failure only
// means no advice or no early faults.
func adviseFresh(dst []byte) {
	var fresh []pageRange
	adviseRuns(dst, func(from, to uintptr) { fresh = append(fresh, pageRange{from, to}) })
	populate(dst, fresh)
}

// pageRange is [from, to) of the address space.
type pageRange struct{ from, to uintptr }

// populate faults in the ranges of dst, split evenly in huge-page steps over the copy
// goroutines (copiers): each goroutine faults whole huge pages of its own, so no two wait
// on one.
func populate(dst []byte, rs []pageRange) {
	a := hugeAdvice()
	var total uintptr
	for _, r := range rs {
		total += r.to - r.from
	}
	if total == 0 || a.huge == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	workers := uintptr(min(copiers(), int(total/a.huge)))
	step := ((total+workers-1)/workers + a.huge - 1) &^ (a.huge - 1)
	var wg sync.WaitGroup
	// Cut the ranges into pieces of at most step bytes, each a goroutine's.
	for _, r := range rs {
		for lo := r.from; lo < r.to; lo += step {
			hi := min(lo+step, r.to)
			wg.Go(func() {
				// Every page, not only a block's first: where the kernel has no huge
				// page to give, the block is mapped 4 KiB at a time.
				for at := lo; at < hi; at += a.page {
					// SAFETY: at is a page boundary inside dst (the ranges are), so the
					// word is dst's and aligned; adding zero changes no byte.
					atomic.AddUint32((*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(dst)), at-base)), 0)
				}
			})
		}
	}
	wg.Wait()
}

// adviseRuns advises MADV_HUGEPAGE the runs of fresh huge-page blocks inside dst and
// hands each run to advised.
func adviseRuns(dst []byte, advised func(from, to uintptr)) {
	advise := func(from, to uintptr) {
		if from == 0 || to <= from {
			return
		}
		adviseRange(from, to)
		advised(from, to)
	}
	if len(dst) < adviseMin {
		return
	}
	a := hugeAdvice()
	if a.huge == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	lo := (base + a.huge - 1) &^ (a.huge - 1)
	hi := (base + uintptr(len(dst))) &^ (a.huge - 1)
	if hi <= lo {
		return
	}
	per := a.huge / a.page
	// One residency byte per page, a window of blocks at a time. The kernel's check
	// costs time per resident page (docs/benchmarks.md, "Fresh destinations faulted
	// in"): a window with no
	// fresh block ends the scan, since a destination in use is in use throughout, and
	// the first window is one block, doubling from there, so that a destination in use
	// costs one block's check.
	const most = 64
	var vec []byte
	run := uintptr(0) // start of the current run of fresh blocks; 0: none
	for at, window := lo, uintptr(1); at < hi; at, window = at+window*a.huge, min(2*window, most) {
		end := min(at+window*a.huge, hi)
		if n := (end - at) / a.page; uintptr(len(vec)) < n {
			vec = make([]byte, n)
		}
		// SAFETY: [at, end) lies inside dst, live Go memory (or the caller's mapping),
		// and vec holds a byte per page of it.
		if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, at, end-at, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			advise(run, at)
			return
		}
		if run == 0 && !hasFresh(vec[:(end-at)/a.page], per, a.zeros) {
			return
		}
		for blk := at; blk < end; blk += a.huge {
			i := (blk - at) / a.page
			// Any byte set may mean a resident page (only bit 0 is defined).
			if bytes.Equal(vec[i:i+per], a.zeros) {
				if run == 0 {
					run = blk
				}
				continue
			}
			advise(run, blk)
			run = 0
		}
	}
	advise(run, hi)
}

// hasFresh reports whether vec, residency bytes of whole blocks of per pages, shows a
// block with no page resident.
func hasFresh(vec []byte, per uintptr, zeros []byte) bool {
	for i := uintptr(0); i < uintptr(len(vec)); i += per {
		if bytes.Equal(vec[i:i+per], zeros) {
			return true
		}
	}
	return false
}

// adviseRange advises [from, to) MADV_HUGEPAGE.
func adviseRange(from, to uintptr) {
	// SAFETY: a page-aligned range inside a live destination; the advice changes no
	// byte of it.
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, from, to-from, syscall.MADV_HUGEPAGE)
}
