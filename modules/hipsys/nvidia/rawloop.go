package nvidia

/*
#include <stdlib.h>
#include <time.h>
#include "cu.h"

// The benchmarks' in-process anchor: the same loops as bench/anchor.c, run in C inside
// this process with this package's resolved entry points, one cgo call per loop. Set
// beside anchor.c's figures they split a gap into what the platform's calls add (this
// loop is fast, the Go benchmark slow) and what the process around the driver costs
// (this loop is slow too).
static double raw_now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
// it, when not NULL, receives each iteration's start time (µs) for the spread.
static double raw_launch_loop(uintptr_t f, uintptr_t s, int n, int sync, double* it) {
	if (cubehip_ensure()) return -1;
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		if (it) it[i] = raw_now_us();
		if (CUFN(launchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, unsigned, CUstream, void**, void**)((CUfunction)f, 1, 1, 1, 1, 1, 1, 0,
			(CUstream)s, NULL, NULL)) return -1;
		if (sync && CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	}
	if (CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	return raw_now_us() - t;
}
static double raw_graph_loop(uintptr_t e, uintptr_t s, int n, double* it) {
	if (cubehip_ensure()) return -1;
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		if (it) it[i] = raw_now_us();
		if (CUFN(graphLaunch, CUgraphExec, CUstream)((CUgraphExec)e, (CUstream)s)) return -1;
	}
	if (CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	return raw_now_us() - t;
}
static double raw_read_loop(CUdeviceptr d, int n, double* it) {
	if (cubehip_ensure()) return -1;
	char buf[4];
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		if (it) it[i] = raw_now_us();
		if (CUFN(memcpyDtoH, void*, CUdeviceptr, size_t)(buf, d, 4)) return -1;
	}
	return raw_now_us() - t;
}
static double raw_alloc_loop(size_t size, int n, double* it) {
	if (cubehip_ensure()) return -1;
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		if (it) it[i] = raw_now_us();
		CUdeviceptr d;
		if (CUFN(memAlloc, CUdeviceptr*, size_t)(&d, size)) return -1;
		if (CUFN(memFree, CUdeviceptr)(d)) return -1;
	}
	return raw_now_us() - t;
}
// The probes: the loops above with what a call from Go puts between two driver calls,
// one thing at a time, for BenchmarkGaps. gap_ns spins that long after each driver call
// (time, touching nothing); touch_kb writes that much memory after each (the caches a
// Go runtime's transition and bookkeeping evict, without the time); ensure runs the
// trampolines' cubehip_ensure before each call (the settle hook and the context check).
// The memory touched: allocated by the first probe that touches any, so that a program
// that never runs one carries a pointer, not a megabyte.
#define RAW_TOUCH_MAX (1 << 20)
static unsigned char* raw_touch_buf;
// raw_between_us sums the time raw_between took since the probe began (what the
// variant really put between calls: a spin ends on the first clock read past its gap).
static double raw_between_us;
static void raw_between(int gap_ns, int touch_kb) {
	if (gap_ns <= 0 && touch_kb <= 0) return;
	double t0 = raw_now_us(), t1 = t0;
	if (gap_ns > 0) {
		double until = t0 + gap_ns / 1e3;
		while ((t1 = raw_now_us()) < until) {}
	}
	if (touch_kb > 0) {
		for (int i = 0; i < touch_kb * 1024 && i < RAW_TOUCH_MAX; i += 64) raw_touch_buf[i]++;
		t1 = raw_now_us();
	}
	raw_between_us += t1 - t0;
}
static double raw_between_total(void) { return raw_between_us; }
// raw_clock_ns is one clock read's cost, for the gaps' true length.
static double raw_clock_ns(void) {
	double t = raw_now_us();
	for (int i = 0; i < 9999; i++) raw_now_us();
	return (raw_now_us() - t) * 1e3 / 10000;
}
static int raw_probe_ready(int touch_kb) {
	if (touch_kb > 0 && !raw_touch_buf) raw_touch_buf = calloc(1, RAW_TOUCH_MAX);
	return touch_kb <= 0 || raw_touch_buf != NULL;
}
static double raw_alloc_probe(size_t size, int n, int gap_ns, int touch_kb, int ensure) {
	if (!raw_probe_ready(touch_kb) || cubehip_ensure()) return -1;
	raw_between_us = 0;
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		CUdeviceptr d;
		if (ensure && cubehip_ensure()) return -1;
		if (CUFN(memAlloc, CUdeviceptr*, size_t)(&d, size)) return -1;
		raw_between(gap_ns, touch_kb);
		if (ensure && cubehip_ensure()) return -1;
		if (CUFN(memFree, CUdeviceptr)(d)) return -1;
		raw_between(gap_ns, touch_kb);
	}
	return raw_now_us() - t;
}
static double raw_launch_probe(uintptr_t f, uintptr_t s, int n, int gap_ns, int touch_kb, int ensure) {
	if (!raw_probe_ready(touch_kb) || cubehip_ensure()) return -1;
	raw_between_us = 0;
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		if (ensure && cubehip_ensure()) return -1;
		if (CUFN(launchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, unsigned, CUstream, void**, void**)((CUfunction)f, 1, 1, 1, 1, 1, 1, 0,
			(CUstream)s, NULL, NULL)) return -1;
		raw_between(gap_ns, touch_kb);
	}
	if (CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	return raw_now_us() - t;
}
*/
import "C"

import (
	"errors"
	"time"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

var errRawLoop = errors.New("nvidia: raw benchmark loop failed")

// rawLaunchLoop launches fn n times on s (syncing after each when sync is set) and
// returns the microseconds the loop took, measured in C.
func rawLaunchLoop(fn hipsys.Function, s hipsys.Stream, n int, sync bool) (float64, error) {
	return rawLaunchLoopTimed(fn, s, n, sync, nil)
}

// rawLaunchLoopTimed is rawLaunchLoop with each launch's start time (µs) in starts
// (len n) when not nil.
func rawLaunchLoopTimed(fn hipsys.Function, s hipsys.Stream, n int, sync bool, starts []float64) (float64, error) {
	y := C.int(0)
	if sync {
		y = 1
	}
	return rawResult(C.raw_launch_loop(C.uintptr_t(fn), C.uintptr_t(s), C.int(n), y, cFloats(starts)))
}

// RawLaunchLoop is the anchor's launch loop run in C in this process: n launches of fn
// (a grid and block of one, no arguments) on s with cuLaunchKernel, then a sync, timed
// in C. It is the raw driver's rate, for benchmarks that hold a launch path to it in one
// process (cubehip bench, the server's BenchmarkLayers), where two processes' figures
// differ by more than the budgets.
func (p *Platform) RawLaunchLoop(fn hipsys.Function, s hipsys.Stream, n int) (time.Duration, error) {
	if !p.functions.has(uintptr(fn)) {
		return 0, hipsys.NewError(platformName, "hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, "raw launch loop")
	}
	if err := p.checkStream("hipModuleLaunchKernel", s); err != nil {
		return 0, err
	}
	us, err := rawLaunchLoop(fn, s, n, false)
	return time.Duration(us * 1e3), err
}

// RawReadLoop is the anchor's read loop run in C in this process: n blocking 4-byte
// copies from d into C memory with cuMemcpyDtoH, timed in C; see RawLaunchLoop.
func (p *Platform) RawReadLoop(d hipsys.DevicePtr, n int) (time.Duration, error) {
	us, err := rawReadLoop(d, n, nil)
	return time.Duration(us * 1e3), err
}

// rawGraphLoop replays e n times on s; see rawLaunchLoop. starts, when not nil (len n),
// receives each iteration's start time in µs.
func rawGraphLoop(e hipsys.GraphExec, s hipsys.Stream, n int, starts []float64) (float64, error) {
	return rawResult(C.raw_graph_loop(C.uintptr_t(e), C.uintptr_t(s), C.int(n), cFloats(starts)))
}

// rawReadLoop reads 4 bytes from d into C stack memory n times; see rawGraphLoop.
func rawReadLoop(d hipsys.DevicePtr, n int, starts []float64) (float64, error) {
	return rawResult(C.raw_read_loop(C.CUdeviceptr(d), C.int(n), cFloats(starts)))
}

// rawAllocLoop allocates and frees size bytes n times; see rawGraphLoop.
func rawAllocLoop(size uint64, n int, starts []float64) (float64, error) {
	return rawResult(C.raw_alloc_loop(C.size_t(size), C.int(n), cFloats(starts)))
}

// cFloats passes a Go slice that C fills during the call and does not keep.
func cFloats(f []float64) *C.double {
	if len(f) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&f[0]))
}

func rawResult(us C.double) (float64, error) {
	if us < 0 {
		return 0, errRawLoop
	}
	return float64(us), nil
}

// probe is what a probe loop puts between two driver calls; see raw_between.
type probe struct {
	gapNs, touchKB int
	ensure         bool
}

func (p probe) cEnsure() C.int {
	if p.ensure {
		return 1
	}
	return 0
}

// rawBetween is the time the last probe spent between driver calls, in µs.
func rawBetween() float64 { return float64(C.raw_between_total()) }

// rawClockNs is what one read of the probes' clock costs, in ns.
func rawClockNs() float64 { return float64(C.raw_clock_ns()) }

// rawAllocProbe is rawAllocLoop with p between the calls.
func rawAllocProbe(size uint64, n int, p probe) (float64, error) {
	return rawResult(C.raw_alloc_probe(C.size_t(size), C.int(n), C.int(p.gapNs), C.int(p.touchKB), p.cEnsure()))
}

// rawLaunchProbe is rawLaunchLoop with p after each launch.
func rawLaunchProbe(fn hipsys.Function, s hipsys.Stream, n int, p probe) (float64, error) {
	return rawResult(C.raw_launch_probe(C.uintptr_t(fn), C.uintptr_t(s), C.int(n), C.int(p.gapNs), C.int(p.touchKB), p.cEnsure()))
}
