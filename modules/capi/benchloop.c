//go:build !cubehip_release

/* The C side of the ABI's benchmarks (bench_test.go): loops of one call each, run on a
 * thread the Go runtime never saw, as a C host's thread is, and timed there. Hidden: not
 * part of the library's interface. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "capi.h"

#define HIDDEN __attribute__((visibility("hidden")))

typedef struct {
	void (*fn)(void*); /* when set, the job is fn(arg) instead of a loop of op */
	void* arg;
	int op, n;
	cubehip_device dev;
	cubehip_buffer buf;
	cubehip_kernel kernel;
	cubehip_graph graph;
	double ns_per_op;
	cubehip_status status;
} job;

static double now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void* run(void* p) {
	job* j = p;
	if (j->fn != NULL) {
		j->fn(j->arg);
		return NULL;
	}
	uint32_t word = 0;
	uint64_t size = 0, ns = 0;
	const uint32_t grid[3] = {1, 1, 1};
	cubehip_arg arg = {.kind = CUBEHIP_ARG_BUFFER};
	arg.v.buffer.buffer = j->buf;
	/* Without a buffer, the kernel takes no argument: the raw driver's anchor kernel. */
	const size_t nargs = j->buf.id != 0 ? 1 : 0;
	cubehip_status s = CUBEHIP_SUCCESS;
	double t0 = now_ns();
	for (int i = 0; i < j->n && s == CUBEHIP_SUCCESS; i++) {
		switch (j->op) {
		case CAPI_BENCH_SIZE: s = cubehip_buffer_size(j->buf, &size); break;
		case CAPI_BENCH_CHECK: s = cubehip_buffer_check(j->buf); break;
		case CAPI_BENCH_LAUNCH: s = cubehip_launch(j->kernel, 0, grid, &arg, nargs); break;
		case CAPI_BENCH_LAUNCH_SYNC:
			s = cubehip_launch(j->kernel, 0, grid, &arg, nargs);
			if (s == CUBEHIP_SUCCESS) s = cubehip_device_sync(j->dev, 0);
			break;
		case CAPI_BENCH_READ4: s = cubehip_buffer_read(j->buf, 0, 0, &word, 4); break;
		case CAPI_BENCH_WRITE4: s = cubehip_buffer_write(j->buf, 0, 0, &word, 4); break;
		case CAPI_BENCH_ALLOC_RELEASE: {
			cubehip_buffer b;
			s = cubehip_buffer_alloc(j->dev, 0, 1024, &b);
			if (s == CUBEHIP_SUCCESS) s = cubehip_buffer_release(b);
			break;
		}
		case CAPI_BENCH_PROFILE: {
			cubehip_profile p;
			s = cubehip_profile_start(j->dev, 0, &p);
			if (s == CUBEHIP_SUCCESS) s = cubehip_profile_stop(p, &ns);
			break;
		}
		case CAPI_BENCH_SYNC: s = cubehip_device_sync(j->dev, 0); break;
		case CAPI_BENCH_REPLAY: s = cubehip_graph_replay(j->graph); break;
		}
	}
	if (s == CUBEHIP_SUCCESS && (j->op == CAPI_BENCH_LAUNCH || j->op == CAPI_BENCH_REPLAY)) s = cubehip_device_sync(j->dev, 0);
	j->ns_per_op = (now_ns() - t0) / j->n;
	j->status = s;
	return NULL;
}

/* One C thread runs every measurement, started on the first and kept: a thread made per
 * measurement lands on whichever core the kernel picks, and the driver's pageable copies
 * and stream waits cost up to a microsecond more or less from one core to another, which
 * would land on the ABI's side of a pair and not the other's. */
static pthread_mutex_t bench_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bench_cv = PTHREAD_COND_INITIALIZER;
static job* bench_job;  /* posted, not yet taken */
static job* bench_done; /* finished, not yet collected */
static int bench_started;
static pthread_t bench_tid;
static int bench_busy; /* a caller's job is posted or running: the next caller waits */

static void* bench_thread(void* unused) {
	(void)unused;
	pthread_mutex_lock(&bench_mu);
	for (;;) {
		while (bench_job == NULL) pthread_cond_wait(&bench_cv, &bench_mu);
		job* j = bench_job;
		bench_job = NULL;
		pthread_mutex_unlock(&bench_mu);
		run(j);
		pthread_mutex_lock(&bench_mu);
		bench_done = j;
		pthread_cond_broadcast(&bench_cv);
	}
	return NULL;
}

/* start_locked starts the bench thread once; under bench_mu. */
static int start_locked(void) {
	if (bench_started) return 1;
	if (pthread_create(&bench_tid, NULL, bench_thread, NULL) != 0) return 0;
	pthread_detach(bench_tid);
	bench_started = 1;
	return 1;
}

static cpu_set_t unpinned;

/* capi_bench_pin pins the calling thread and the bench thread to the core the caller is
 * on, so that both sides of a pair (the ABI's loop on the bench thread, the other side's
 * on the caller's) run where each other ran: which core runs a loop moves a
 * driver-bound call's time by up to a tenth, between cores of one machine. Returns the
 * core, or -1 when pinning is not possible (the pairs then run unpinned). */
HIDDEN int capi_bench_pin(void) {
	int cpu = sched_getcpu();
	if (cpu < 0 || sched_getaffinity(0, sizeof unpinned, &unpinned) != 0) return -1;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_mutex_lock(&bench_mu);
	int ok = start_locked() && pthread_setaffinity_np(bench_tid, sizeof one, &one) == 0;
	pthread_mutex_unlock(&bench_mu);
	if (!ok || sched_setaffinity(0, sizeof one, &one) != 0) return -1;
	return cpu;
}

/* capi_bench_unpin lets both threads run anywhere they could before the pin. */
HIDDEN void capi_bench_unpin(void) {
	sched_setaffinity(0, sizeof unpinned, &unpinned);
	pthread_mutex_lock(&bench_mu);
	if (bench_started) pthread_setaffinity_np(bench_tid, sizeof unpinned, &unpinned);
	pthread_mutex_unlock(&bench_mu);
}

/* post runs j on the bench thread and returns once it is done; 0 if the thread could not
 * be started. */
static int post(job* j) {
	pthread_mutex_lock(&bench_mu);
	if (!start_locked()) {
		pthread_mutex_unlock(&bench_mu);
		return 0;
	}
	while (bench_busy) pthread_cond_wait(&bench_cv, &bench_mu);
	bench_busy = 1;
	bench_job = j;
	pthread_cond_broadcast(&bench_cv);
	while (bench_done != j) pthread_cond_wait(&bench_cv, &bench_mu);
	bench_done = NULL;
	bench_busy = 0;
	pthread_cond_broadcast(&bench_cv);
	pthread_mutex_unlock(&bench_mu);
	return 1;
}

HIDDEN double capi_bench_run(int op, uint64_t dev, uint64_t buf, uint64_t kernel, uint64_t graph, int n,
	cubehip_status* status) {
	job j = {.op = op, .n = n, .dev = {dev}, .buf = {buf}, .kernel = {kernel}, .graph = {graph}};
	if (!post(&j)) {
		*status = CUBEHIP_ERROR_INTERNAL;
		return 0;
	}
	*status = j.status;
	return j.ns_per_op;
}

/* capi_bench_call runs fn(arg) on the bench thread: the raw driver's loops, run where the
 * ABI's run, as one C host's thread would make both. Returns 0 if the thread could not be
 * started (fn did not run). */
HIDDEN int capi_bench_call(void (*fn)(void*), void* arg) {
	job j = {.fn = fn, .arg = arg};
	return post(&j);
}
