/* cloop.c: the raw C loops through libcubehip's C ABI that bench.py holds the Python
 * package against, in the same process, on the same kernel, arguments and stream. Built as a
 * shared library whose cubehip_* symbols resolve to the libcubehip the Python package
 * loaded (RTLD_GLOBAL), so both sides call the very same library. */
#define _POSIX_C_SOURCE 199309L
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
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

/* ---- the raw driver: the floor under every launch ------------------------------------------
 * cloop_driver_launch is the launch loop straight on the CUDA driver API (dlopen'ed, so this
 * library builds and loads without CUDA): an empty kernel loaded from PTX, n cuLaunchKernel
 * on a non-blocking stream of the device's primary context, then one cuStreamSynchronize.
 * It is what no library's launch from any language can go under on this machine. Returns
 * the loop's nanoseconds, -1 where there is no CUDA driver, or -2 - the CUresult. */
static const char empty_ptx[] =
	".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry empty()\n{\n\tret;\n}\n";

int64_t cloop_driver_launch(int device, int64_t n) {
	static void* lib;
	static void *func, *stream;
	static int (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
	static int (*sync)(void*);
	static int (*set)(void*), (*current)(void**);
	static void* ctx;
	if (lib == NULL) {
		lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (lib == NULL) return -1;
		int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
		int (*dev_get)(int*, int) = (int (*)(int*, int))dlsym(lib, "cuDeviceGet");
		int (*retain)(void**, int) = (int (*)(void**, int))dlsym(lib, "cuDevicePrimaryCtxRetain");
		set = (int (*)(void*))dlsym(lib, "cuCtxSetCurrent");
		current = (int (*)(void**))dlsym(lib, "cuCtxGetCurrent");
		int (*load)(void**, const void*) = (int (*)(void**, const void*))dlsym(lib, "cuModuleLoadData");
		int (*get)(void**, void*, const char*) = (int (*)(void**, void*, const char*))dlsym(lib, "cuModuleGetFunction");
		int (*create)(void**, unsigned) = (int (*)(void**, unsigned))dlsym(lib, "cuStreamCreate");
		launch = (int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**))dlsym(
			lib, "cuLaunchKernel");
		sync = (int (*)(void*))dlsym(lib, "cuStreamSynchronize");
		if (!init || !dev_get || !retain || !set || !current || !load || !get || !create || !launch || !sync) return -1;
		int d, r;
		void* mod;
		if ((r = init(0)) || (r = dev_get(&d, device)) || (r = retain(&ctx, d)) || (r = set(ctx)) ||
			(r = load(&mod, empty_ptx)) || (r = get(&func, mod, "empty")) || (r = create(&stream, 1 /* non-blocking */))) {
			lib = NULL;
			return -2 - r;
		}
	}
	/* The thread's context is put back after the loop: the library's calls on this thread
	 * find it as they left it. */
	void* prev = NULL;
	current(&prev);
	set(ctx);
	int64_t t0 = now_ns();
	int r = 0;
	for (int64_t i = 0; i < n && r == 0; i++) r = launch(func, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL);
	if (r == 0) r = sync(stream);
	int64_t t = now_ns() - t0;
	set(prev);
	return r ? -2 - r : t;
}

/* The host's own copy rate, the transfers' anchor: n bytes from src to dst over threads
 * threads, each a contiguous share. Returns the copy's nanoseconds, or -1 when a thread
 * cannot start. */
struct share {
	char* dst;
	const char* src;
	uint64_t n;
};

static void* copy_share(void* p) {
	struct share* s = p;
	memcpy(s->dst, s->src, s->n);
	return NULL;
}

int64_t cloop_memcpy(void* dst, const void* src, uint64_t n, int threads) {
	enum { MAX_THREADS = 256 };
	if (threads < 1) threads = 1;
	if (threads > MAX_THREADS) threads = MAX_THREADS;
	pthread_t t[MAX_THREADS];
	struct share s[MAX_THREADS];
	uint64_t step = (n + (uint64_t)threads - 1) / (uint64_t)threads;
	for (int i = 0; i < threads; i++) {
		uint64_t lo = step * (uint64_t)i < n ? step * (uint64_t)i : n, hi = lo + step < n ? lo + step : n;
		s[i] = (struct share){(char*)dst + lo, (const char*)src + lo, hi - lo};
	}
	int64_t t0 = now_ns();
	int started = 0;
	while (started < threads - 1 && pthread_create(&t[started], NULL, copy_share, &s[started + 1]) == 0) started++;
	copy_share(&s[0]);
	for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
	return started == threads - 1 ? now_ns() - t0 : -1;
}
