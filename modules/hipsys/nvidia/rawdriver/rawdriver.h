// Package rawdriver's C: the anchor loops (loops.c) and the fake driver entries
// (fake.c). The few driver types and prototypes needed are declared here by hand, as
// nvidia/bench/anchor.c declares them, so that this package shares nothing with package
// nvidia's C. The C symbols carry the rawd_ prefix: every cgo package of a binary links
// into one C namespace.
#ifndef RAWD_H
#define RAWD_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUfunction;
typedef void* CUgraphExec;

// The entry points the loops call, resolved by driver.go.
struct rawd_cu {
	CUresult (*init)(unsigned);
	CUresult (*deviceGet)(CUdevice*, int);
	CUresult (*primaryCtxRetain)(CUcontext*, CUdevice);
	CUresult (*ctxGetCurrent)(CUcontext*);
	CUresult (*ctxSetCurrent)(CUcontext);
	CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
		unsigned, unsigned, CUstream, void**, void**);
	CUresult (*streamSynchronize)(CUstream);
	CUresult (*graphLaunch)(CUgraphExec, CUstream);
	CUresult (*memAlloc)(CUdeviceptr*, size_t);
	CUresult (*memFree)(CUdeviceptr);
	CUresult (*memcpyDtoH)(void*, CUdeviceptr, size_t);
	CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
	CUresult (*memcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
	CUresult (*memcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
	CUresult (*ctxEnablePeerAccess)(CUcontext, unsigned);
};
extern struct rawd_cu rawd_cu;

// Open's steps: cuInit, then device ordinal's primary context, retained.
CUresult rawd_retain(int ordinal, uintptr_t* ctx);

// The loops: each makes ctx current, runs n iterations, syncs s where it has a stream,
// restores the thread's context, and reports the µs the iterations and the sync took in
// *us. A driver error stops the loop and is returned.
CUresult rawd_launch_loop(uintptr_t ctx, uintptr_t f, uintptr_t s, int n, int sync, double* us);
CUresult rawd_graph_loop(uintptr_t ctx, uintptr_t e, uintptr_t s, int n, double* us);
CUresult rawd_read_loop(uintptr_t ctx, CUdeviceptr d, int n, double* us);
CUresult rawd_alloc_loop(uintptr_t ctx, size_t size, int n, double* us);
CUresult rawd_copy_loop(uintptr_t ctx, CUdeviceptr d, uintptr_t h, size_t size, int up, uintptr_t s,
	int n, double* us);
CUresult rawd_peer_loop(uintptr_t ctx, CUdeviceptr dst, uintptr_t dstCtx, CUdeviceptr src, uintptr_t srcCtx,
	size_t size, uintptr_t s, int n, double* us);

// A loop as a job another thread runs (Driver.On): job names one of the loops above by
// RAWD_JOB_*, rawd_run_job runs it with its fields and stores its time and status.
enum { RAWD_JOB_LAUNCH, RAWD_JOB_GRAPH, RAWD_JOB_READ };
typedef struct {
	int loop, n, sync;
	uintptr_t ctx, handle, stream; /* handle: the function, the graph or the device pointer */
	double us;
	CUresult r;
} rawd_job;
void rawd_run_job(void* job);

// The fake driver (fake.c).
#define RAWD_FAKE_MAX 8192
#define RAWD_FAKE_PARAMS 64
void* rawd_fake_launch_entry(void);
void* rawd_fake_param_info_entry(void);
void rawd_fake_reset(uintptr_t refuse, unsigned delay_us);
void rawd_fake_set_params(const uint64_t* offsets, const uint64_t* sizes, int n);
int rawd_fake_count(void);
void rawd_fake_call(int i, uintptr_t* fn, uint64_t* arg, uintptr_t* thread);

// The fake NVRTC name expression calls (fakenvrtc.c).
void* rawd_fake_add_name_entry(void);
void* rawd_fake_lowered_entry(void);
void rawd_fake_names_reset(void);
uintptr_t rawd_thread_self(void);

#endif
