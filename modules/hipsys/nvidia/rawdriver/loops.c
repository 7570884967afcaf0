// The anchor loops (rawdriver.h): nvidia/bench/anchor.c's loops, in this process.
#include <time.h>

#include "rawdriver.h"

struct rawd_cu rawd_cu;

static double now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

CUresult rawd_retain(int ordinal, uintptr_t* ctx) {
	CUresult r = rawd_cu.init(0);
	if (r) return r;
	CUdevice d;
	if ((r = rawd_cu.deviceGet(&d, ordinal))) return r;
	CUcontext c = NULL;
	r = rawd_cu.primaryCtxRetain(&c, d);
	*ctx = (uintptr_t)c;
	return r;
}

// enter makes ctx current and keeps the thread's context in *prev, which leave
// restores: package nvidia caches each thread's current context, and a loop that left
// another one current would make its next call on this thread run in the wrong one.
static CUresult enter(uintptr_t ctx, CUcontext* prev) {
	CUresult r = rawd_cu.ctxGetCurrent(prev);
	if (r) return r;
	return rawd_cu.ctxSetCurrent((CUcontext)ctx);
}

static CUresult leave(CUresult r, CUcontext prev) {
	CUresult r2 = rawd_cu.ctxSetCurrent(prev);
	return r ? r : r2;
}

CUresult rawd_launch_loop(uintptr_t ctx, uintptr_t f, uintptr_t s, int n, int sync, double* us) {
	CUcontext prev;
	CUresult r = enter(ctx, &prev);
	if (r) return r;
	double t = now_us();
	for (int i = 0; i < n && !r; i++) {
		r = rawd_cu.launchKernel((CUfunction)f, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, NULL, NULL);
		if (!r && sync) r = rawd_cu.streamSynchronize((CUstream)s);
	}
	if (!r) r = rawd_cu.streamSynchronize((CUstream)s);
	*us = now_us() - t;
	return leave(r, prev);
}

CUresult rawd_graph_loop(uintptr_t ctx, uintptr_t e, uintptr_t s, int n, double* us) {
	CUcontext prev;
	CUresult r = enter(ctx, &prev);
	if (r) return r;
	double t = now_us();
	for (int i = 0; i < n && !r; i++) r = rawd_cu.graphLaunch((CUgraphExec)e, (CUstream)s);
	if (!r) r = rawd_cu.streamSynchronize((CUstream)s);
	*us = now_us() - t;
	return leave(r, prev);
}

CUresult rawd_read_loop(uintptr_t ctx, CUdeviceptr d, int n, double* us) {
	CUcontext prev;
	CUresult r = enter(ctx, &prev);
	if (r) return r;
	char buf[4];
	double t = now_us();
	for (int i = 0; i < n && !r; i++) r = rawd_cu.memcpyDtoH(buf, d, sizeof buf);
	*us = now_us() - t;
	return leave(r, prev);
}

CUresult rawd_alloc_loop(uintptr_t ctx, size_t size, int n, double* us) {
	CUcontext prev;
	CUresult r = enter(ctx, &prev);
	if (r) return r;
	double t = now_us();
	for (int i = 0; i < n && !r; i++) {
		CUdeviceptr d;
		r = rawd_cu.memAlloc(&d, size);
		if (!r) r = rawd_cu.memFree(d);
	}
	*us = now_us() - t;
	return leave(r, prev);
}

CUresult rawd_copy_loop(uintptr_t ctx, CUdeviceptr d, uintptr_t h, size_t size, int up, uintptr_t s,
		int n, double* us) {
	CUcontext prev;
	CUresult r = enter(ctx, &prev);
	if (r) return r;
	double t = now_us();
	for (int i = 0; i < n && !r; i++) {
		if (up) r = rawd_cu.memcpyHtoDAsync(d, (const void*)h, size, (CUstream)s);
		else r = rawd_cu.memcpyDtoHAsync((void*)h, d, size, (CUstream)s);
	}
	if (!r) r = rawd_cu.streamSynchronize((CUstream)s);
	*us = now_us() - t;
	return leave(r, prev);
}

// rawd_peer_loop enables access from ctx (dst's context) to srcCtx (704, already
// enabled, is fine), then copies size bytes from src to dst n times with
// cuMemcpyPeerAsync on s, and syncs s.
CUresult rawd_peer_loop(uintptr_t ctx, CUdeviceptr dst, uintptr_t dstCtx, CUdeviceptr src, uintptr_t srcCtx,
		size_t size, uintptr_t s, int n, double* us) {
	CUcontext prev;
	CUresult r = enter(ctx, &prev);
	if (r) return r;
	if (srcCtx != dstCtx) {
		r = rawd_cu.ctxEnablePeerAccess((CUcontext)srcCtx, 0);
		if (r == 704) r = 0;
		if (r) return leave(r, prev);
	}
	double t = now_us();
	for (int i = 0; i < n && !r; i++) {
		r = rawd_cu.memcpyPeerAsync(dst, (CUcontext)dstCtx, src, (CUcontext)srcCtx, size, (CUstream)s);
	}
	if (!r) r = rawd_cu.streamSynchronize((CUstream)s);
	*us = now_us() - t;
	return leave(r, prev);
}

void rawd_run_job(void* p) {
	rawd_job* j = p;
	switch (j->loop) {
	case RAWD_JOB_LAUNCH: j->r = rawd_launch_loop(j->ctx, j->handle, j->stream, j->n, j->sync, &j->us); break;
	case RAWD_JOB_GRAPH: j->r = rawd_graph_loop(j->ctx, j->handle, j->stream, j->n, &j->us); break;
	case RAWD_JOB_READ: j->r = rawd_read_loop(j->ctx, (CUdeviceptr)j->handle, j->n, &j->us); break;
	default: j->r = 1; /* CUDA_ERROR_INVALID_VALUE */
	}
}
