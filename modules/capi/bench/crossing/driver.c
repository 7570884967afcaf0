// The raw CUDA driver calls both sides of the measurement make: one context, one stream,
// one empty kernel, the driver opened with dlopen as cubehip's nvidia platform opens it.
#include <dlfcn.h>
#include <stddef.h>

#include "crossing.h"

typedef int (*cu_init)(unsigned);
typedef int (*cu_retain)(void**, int);
typedef int (*cu_set_current)(void*);
typedef int (*cu_stream_create)(void**, unsigned);
typedef int (*cu_module_load)(void**, const void*);
typedef int (*cu_get_function)(void**, void*, const char*);
typedef int (*cu_launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
typedef int (*cu_sync)(void*);

static cu_launch launch;
static cu_sync sync_stream;
static void* fn;
static void* stream;

// An empty kernel for any GPU the driver can JIT for (sm_90 and later).
static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n";

int crossing_driver_open(void) {
	void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return -1;
	cu_init init = (cu_init)dlsym(h, "cuInit");
	cu_retain retain = (cu_retain)dlsym(h, "cuDevicePrimaryCtxRetain");
	cu_set_current set_current = (cu_set_current)dlsym(h, "cuCtxSetCurrent");
	cu_stream_create stream_create = (cu_stream_create)dlsym(h, "cuStreamCreate");
	cu_module_load module_load = (cu_module_load)dlsym(h, "cuModuleLoadData");
	cu_get_function get_function = (cu_get_function)dlsym(h, "cuModuleGetFunction");
	launch = (cu_launch)dlsym(h, "cuLaunchKernel");
	sync_stream = (cu_sync)dlsym(h, "cuStreamSynchronize");
	if (!init || !retain || !set_current || !stream_create || !module_load || !get_function || !launch || !sync_stream)
		return -2;
	void *ctx, *mod;
	int r;
	if ((r = init(0)) || (r = retain(&ctx, 0)) || (r = set_current(ctx)) || (r = stream_create(&stream, 1)) ||
	    (r = module_load(&mod, ptx)) || (r = get_function(&fn, mod, "empty")))
		return r;
	return 0;
}

// Both on the thread that called crossing_driver_open, whose current context it set.
int crossing_driver_launch(void) { return launch(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL); }
int crossing_driver_sync(void) { return sync_stream(stream); }
