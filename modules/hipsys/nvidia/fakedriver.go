package nvidia

// A recording stand-in for cuLaunchKernel, for the launch queue's tests: they run on
// machines without a driver (CI) as well as on GPUs, and check what only a recording can
// show, the order the launches reached the driver, their arguments and the thread that
// issued each. cgo is not allowed in _test.go files, so it lives here; nothing else
// calls it.

/*
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>
#include "cu.h"

#include <stdlib.h>

// The recording, allocated by the first fake_reset: a binary that never runs the queue
// tests carries a few pointers, not the log.
#define FAKE_MAX 8192
static uintptr_t* fake_fn;
static uint64_t* fake_arg;
static uintptr_t* fake_thread;
static int fake_n;
static uintptr_t fake_refuse; // launches of this function are refused (CUDA_ERROR_INVALID_VALUE)
static unsigned fake_delay_us;

static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		unsigned by, unsigned bz, unsigned shmem, CUstream s, void** params, void** extra) {
	if (fake_delay_us) usleep(fake_delay_us);
	int i = __atomic_fetch_add(&fake_n, 1, __ATOMIC_SEQ_CST);
	if (fake_fn && i < FAKE_MAX) {
		fake_fn[i] = (uintptr_t)f;
		fake_arg[i] = params ? *(uint64_t*)params[0] : 0;
		fake_thread[i] = (uintptr_t)pthread_self();
	}
	return (uintptr_t)f == fake_refuse ? 1 : 0;
}

static void* fake_launch_entry(void) { return (void*)fake_launch; }
static void fake_reset(uintptr_t refuse, unsigned delay_us) {
	if (!fake_fn) {
		fake_fn = calloc(FAKE_MAX, sizeof *fake_fn);
		fake_arg = calloc(FAKE_MAX, sizeof *fake_arg);
		fake_thread = calloc(FAKE_MAX, sizeof *fake_thread);
	}
	__atomic_store_n(&fake_n, 0, __ATOMIC_SEQ_CST);
	fake_refuse = refuse;
	fake_delay_us = delay_us;
}
static void fake_call(int i, uintptr_t* fn, uint64_t* arg, uintptr_t* thread) {
	*fn = fake_fn[i];
	*arg = fake_arg[i];
	*thread = fake_thread[i];
}
static int fake_count(void) { return __atomic_load_n(&fake_n, __ATOMIC_SEQ_CST); }
static uintptr_t fake_self(void) { return (uintptr_t)pthread_self(); }
static int fake_swap_tls_dev(int d) { int old = cubehip_tls_dev; cubehip_tls_dev = d; return old; }
// fake_settle is what every trampoline does first, without the context step.
static void fake_settle(void) {
	cubehip_queue* q = __atomic_load_n(&cubehip_queues[cubehip_tls_dev], __ATOMIC_ACQUIRE);
	if (q) cubehip_q_settle(q);
}
static int queue_cpu(cubehip_queue* q) { return __atomic_load_n(&q->cpu, __ATOMIC_RELAXED); }
static int self_cpu(void) { return sched_getcpu(); }
static uint32_t fake_sleeping(cubehip_queue* q) { return __atomic_load_n(&q->sleeping, __ATOMIC_SEQ_CST); }
*/
import "C"

import "unsafe"

type fakeCall struct {
	fn     uintptr
	arg    uint64
	thread uintptr
}

func fakeLaunchEntry() unsafe.Pointer { return C.fake_launch_entry() }

// fakeReset clears the recording; launches of refuse are refused from now on, and every
// launch takes delay microseconds.
func fakeReset(refuse uintptr, delayUS uint) { C.fake_reset(C.uintptr_t(refuse), C.uint(delayUS)) }

func fakeCalls() []fakeCall {
	n := min(int(C.fake_count()), C.FAKE_MAX)
	out := make([]fakeCall, n)
	for i := range out {
		var fn, thread C.uintptr_t
		var arg C.uint64_t
		C.fake_call(C.int(i), &fn, &arg, &thread)
		out[i] = fakeCall{uintptr(fn), uint64(arg), uintptr(thread)}
	}
	return out
}

func fakeSelf() uintptr             { return uintptr(C.fake_self()) }
func fakeSwapTLSDev(d int) int      { return int(C.fake_swap_tls_dev(C.int(d))) }
func fakeSettle()                   { C.fake_settle() }
func (q *launchQueue) parked() bool { return C.fake_sleeping(q.q) != 0 }

// cpus are the CPU the queue's thread last woke on and the calling thread's, for the
// placement diagnostics of the benchmarks.
func (q *launchQueue) cpus() (queue, self int) { return int(C.queue_cpu(q.q)), int(C.self_cpu()) }
