package nvidia

/*
#include <pthread.h>
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
static double raw_launch_loop(uintptr_t f, uintptr_t s, int n, int sync) {
	if (cubehip_ensure()) return -1;
	double t = raw_now_us();
	for (int i = 0; i < n; i++) {
		if (CUFN(launchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, unsigned, CUstream, void**, void**)((CUfunction)f, 1, 1, 1, 1, 1, 1, 0,
			(CUstream)s, NULL, NULL)) return -1;
		if (sync && CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	}
	if (CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	return raw_now_us() - t;
}
// Clears the upper halves of the vector registers, as compilers do before calling SSE
// code after AVX code: a diagnosis of whether Go leaves them dirty for the driver.
static void raw_vzeroupper(void) {
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx")) __asm__ volatile("vzeroupper");
#endif
}
static double raw_graph_loop(uintptr_t e, uintptr_t s, int n) {
	if (cubehip_ensure()) return -1;
	if (n < 0) { n = -n; raw_vzeroupper(); }
	double t = raw_now_us();
	for (int i = 0; i < n; i++)
		if (CUFN(graphLaunch, CUgraphExec, CUstream)((CUgraphExec)e, (CUstream)s)) return -1;
	if (CUFN(streamSynchronize, CUstream)((CUstream)s)) return -1;
	return raw_now_us() - t;
}
static double raw_read_loop(CUdeviceptr d, int n) {
	if (cubehip_ensure()) return -1;
	if (n < 0) { n = -n; raw_vzeroupper(); }
	char buf[4];
	double t = raw_now_us();
	for (int i = 0; i < n; i++)
		if (CUFN(memcpyDtoH, void*, CUdeviceptr, size_t)(buf, d, 4)) return -1;
	return raw_now_us() - t;
}

// The same loops on a thread C creates, not one the Go runtime runs goroutines on.
struct raw_job { int graph; uintptr_t h, s; int n; double us; };
static void* raw_job_run(void* p) {
	struct raw_job* j = p;
	j->us = j->graph ? raw_graph_loop(j->h, j->s, j->n) : raw_read_loop(j->h, j->n);
	return NULL;
}
static double raw_on_pthread(int graph, uintptr_t h, uintptr_t s, int n) {
	struct raw_job j = {graph, h, s, n, -1};
	pthread_t t;
	if (pthread_create(&t, NULL, raw_job_run, &j) || pthread_join(t, NULL)) return -1;
	return j.us;
}
*/
import "C"

import (
	"errors"

	"github.com/cubehip/cubehip/modules/hipsys"
)

var errRawLoop = errors.New("nvidia: raw benchmark loop failed")

// rawLaunchLoop launches fn n times on s (syncing after each when sync is set) and
// returns the microseconds the loop took, measured in C.
func rawLaunchLoop(fn hipsys.Function, s hipsys.Stream, n int, sync bool) (float64, error) {
	y := C.int(0)
	if sync {
		y = 1
	}
	return rawResult(C.raw_launch_loop(C.uintptr_t(fn), C.uintptr_t(s), C.int(n), y))
}

// rawGraphLoop replays e n times on s; see rawLaunchLoop. vz clears the vector
// registers' upper halves first.
func rawGraphLoop(e hipsys.GraphExec, s hipsys.Stream, n int, vz bool) (float64, error) {
	return rawResult(C.raw_graph_loop(C.uintptr_t(e), C.uintptr_t(s), C.int(vzN(n, vz))))
}

// rawReadLoop reads 4 bytes from d into C stack memory n times; see rawGraphLoop.
func rawReadLoop(d hipsys.DevicePtr, n int, vz bool) (float64, error) {
	return rawResult(C.raw_read_loop(C.CUdeviceptr(d), C.int(vzN(n, vz))))
}

// vzN passes vz to C as the count's sign, so the loops keep one signature.
func vzN(n int, vz bool) int {
	if vz {
		return -n
	}
	return n
}

// rawOnThread runs rawGraphLoop (graph) or rawReadLoop (h is the device pointer) on a
// thread C creates for it.
func rawOnThread(graph bool, h uintptr, s hipsys.Stream, n int) (float64, error) {
	g := C.int(0)
	if graph {
		g = 1
	}
	return rawResult(C.raw_on_pthread(g, C.uintptr_t(h), C.uintptr_t(s), C.int(n)))
}

func rawResult(us C.double) (float64, error) {
	if us < 0 {
		return 0, errRawLoop
	}
	return float64(us), nil
}
