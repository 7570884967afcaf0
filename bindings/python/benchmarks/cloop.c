/* cloop.c: the raw C loops through libcubehip's C ABI that bench.py holds the Python
 * package against, in the same process, on the same kernel, arguments and stream. Built as a
 * shared library whose cubehip_* symbols resolve to the libcubehip the Python package
 * loaded (RTLD_GLOBAL), so both sides call the very same library. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <time.h>

#include "cubehip.h"

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* n launches of kernel on stream, each followed by a sync of the stream when sync_each, then
 * one sync. Returns the loop's nanoseconds, or -status on a failure. */
int64_t cloop_launch(uint64_t device, uint64_t kernel, uint64_t stream, const uint32_t grid[3],
	const cubehip_arg* args, size_t nargs, int64_t n, int sync_each) {
	cubehip_device dev = {device};
	cubehip_kernel k = {kernel};
	int64_t t0 = now_ns();
	for (int64_t i = 0; i < n; i++) {
		cubehip_status s = cubehip_launch(k, stream, grid, args, nargs);
		if (s == CUBEHIP_SUCCESS && sync_each) s = cubehip_device_sync(dev, stream);
		if (s != CUBEHIP_SUCCESS) return -(int64_t)s;
	}
	cubehip_status s = cubehip_device_sync(dev, stream);
	if (s != CUBEHIP_SUCCESS) return -(int64_t)s;
	return now_ns() - t0;
}

/* n replays of graph, then one sync of stream. */
int64_t cloop_replay(uint64_t device, uint64_t graph, uint64_t stream, int64_t n) {
	cubehip_device dev = {device};
	cubehip_graph g = {graph};
	int64_t t0 = now_ns();
	for (int64_t i = 0; i < n; i++) {
		cubehip_status s = cubehip_graph_replay(g);
		if (s != CUBEHIP_SUCCESS) return -(int64_t)s;
	}
	cubehip_status s = cubehip_device_sync(dev, stream);
	if (s != CUBEHIP_SUCCESS) return -(int64_t)s;
	return now_ns() - t0;
}

/* n reads of size bytes of buffer into dst. */
int64_t cloop_read(uint64_t buffer, void* dst, uint64_t size, int64_t n) {
	cubehip_buffer b = {buffer};
	int64_t t0 = now_ns();
	for (int64_t i = 0; i < n; i++) {
		cubehip_status s = cubehip_buffer_read(b, 0, 0, dst, size);
		if (s != CUBEHIP_SUCCESS) return -(int64_t)s;
	}
	return now_ns() - t0;
}

/* n allocations and releases of size bytes. */
int64_t cloop_alloc(uint64_t device, uint64_t size, int64_t n) {
	cubehip_device dev = {device};
	int64_t t0 = now_ns();
	for (int64_t i = 0; i < n; i++) {
		cubehip_buffer b;
		cubehip_status s = cubehip_buffer_alloc(dev, 0, size, &b);
		if (s == CUBEHIP_SUCCESS) s = cubehip_buffer_release(b);
		if (s != CUBEHIP_SUCCESS) return -(int64_t)s;
	}
	return now_ns() - t0;
}
