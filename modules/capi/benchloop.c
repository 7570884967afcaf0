/* The C side of the ABI's benchmarks (bench_test.go): loops of one call each, run on a
 * thread the Go runtime never saw, as a C host's thread is, and timed there. Hidden: not
 * part of the library's interface. */
#include <pthread.h>
#include <time.h>

#include "capi.h"

#define HIDDEN __attribute__((visibility("hidden")))

typedef struct {
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

HIDDEN double capi_bench_run(int op, uint64_t dev, uint64_t buf, uint64_t kernel, uint64_t graph, int n,
	cubehip_status* status) {
	job j = {.op = op, .n = n, .dev = {dev}, .buf = {buf}, .kernel = {kernel}, .graph = {graph}};
	pthread_t t;
	if (pthread_create(&t, NULL, run, &j) != 0) {
		*status = CUBEHIP_ERROR_INTERNAL;
		return 0;
	}
	pthread_join(t, NULL);
	*status = j.status;
	return j.ns_per_op;
}
