// The CUDA driver API as cubehip calls it: the types and prototypes declared by hand
// (no CUDA headers at build time, so a build needs only a C compiler), the function
// pointers resolved from libcuda.so.1 at Open, and one trampoline per call.
//
// Every trampoline that needs a context first makes the calling OS thread's current
// device's primary context current, through a per-thread cache, so cuCtxSetCurrent is
// paid only when a goroutine lands on a thread whose context differs.
#ifndef CUBEHIP_CU_H
#define CUBEHIP_CU_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUarray_st* CUarray;

// CUDA_MEMCPY2D (cuda.h, unchanged since CUDA 3.2's _v2): the memory types are a
// 4-byte enum followed by pointer-aligned fields, 128 bytes in all.
typedef struct {
	size_t srcXInBytes;
	size_t srcY;
	int srcMemoryType;
	const void* srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	size_t srcPitch;
	size_t dstXInBytes;
	size_t dstY;
	int dstMemoryType;
	void* dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	size_t dstPitch;
	size_t WidthInBytes;
	size_t Height;
} CUDA_MEMCPY2D;

_Static_assert(sizeof(CUDA_MEMCPY2D) == 128, "CUDA_MEMCPY2D layout");

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2 };

// Resolved entry points, filled once by Open before any call.
struct cubehip_cu {
	void *init, *deviceGetCount, *deviceGet, *deviceGetName, *deviceGetAttribute,
		*deviceTotalMem, *primaryCtxRetain, *ctxSetCurrent, *ctxSynchronize, *memGetInfo,
		*memAlloc, *memFree, *memHostAlloc, *memFreeHost, *memsetD8, *memsetD8Async,
		*memcpyHtoD, *memcpyDtoH, *memcpyDtoD, *memcpyHtoDAsync, *memcpyDtoHAsync,
		*memcpyDtoDAsync, *memcpy2D, *memcpy2DAsync, *streamCreate, *streamQuery,
		*streamSynchronize, *streamWaitEvent, *streamDestroy, *eventCreate, *eventRecord,
		*eventQuery, *eventSynchronize, *eventElapsedTime, *eventDestroy, *moduleLoadData,
		*moduleGetFunction, *moduleUnload, *launchKernel, *streamBeginCapture,
		*streamEndCapture, *streamIsCapturing, *graphGetNodes, *graphNodeGetType,
		*graphInstantiate, *graphUpload, *graphLaunch, *graphExecDestroy, *graphDestroy;
};
extern struct cubehip_cu cubehip_cu;

// Primary contexts, retained at Open, and the per-OS-thread device and context cache.
#define CUBEHIP_MAX_DEVICES 64
extern CUcontext cubehip_primary[CUBEHIP_MAX_DEVICES];
extern __thread int cubehip_tls_dev;
extern __thread CUcontext cubehip_tls_ctx;

// A status no CUresult uses, returned when a trampoline is handed more kernel arguments
// than its stack array holds; Go rejects that before calling, so it is a guard only.
#define CUBEHIP_TOO_MANY_ARGS (-1)
#define CUBEHIP_MAX_ARGS 1024

#include "queue.h"

// cubehip_ensure_ctx makes the thread's current device's primary context current.
static inline CUresult cubehip_ensure_ctx(void) {
	CUcontext want = cubehip_primary[cubehip_tls_dev];
	if (__builtin_expect(cubehip_tls_ctx == want, 1)) return 0;
	CUresult r = ((CUresult(*)(CUcontext))cubehip_cu.ctxSetCurrent)(want);
	if (r == 0) cubehip_tls_ctx = want;
	return r;
}

// cubehip_ensure is every trampoline's first step: the launches queued on the current
// device are issued first (queue.h), then its context is made current.
static inline CUresult cubehip_ensure(void) {
	cubehip_queue* q = __atomic_load_n(&cubehip_queues[cubehip_tls_dev], __ATOMIC_ACQUIRE);
	if (__builtin_expect(q != NULL, 0)) cubehip_q_settle(q);
	return cubehip_ensure_ctx();
}

#define CUBEHIP_ENSURE() \
	do { \
		CUresult _r = cubehip_ensure(); \
		if (_r) return _r; \
	} while (0)

#define CUFN(field, ...) ((CUresult(*)(__VA_ARGS__))cubehip_cu.field)

static inline int cu_get_dev(void) { return cubehip_tls_dev; }
static inline CUresult cu_set_dev(int d) {
	cubehip_tls_dev = d;
	return cubehip_ensure();
}

#endif
