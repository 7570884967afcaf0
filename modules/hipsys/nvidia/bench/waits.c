// waits: how long a caller waits for an empty kernel or a 4-byte read on an H200, by the
// way it waits, in a plain C program of raw CUDA driver API calls (no Go, no cubehip).
// It is the evidence behind two choices of package nvidia and the server:
//
//   - small reads: a 4-byte read as cuMemcpyDtoHAsync into pinned memory and
//     cuStreamSynchronize against cuMemcpyDtoH into pageable memory (the server makes
//     small reads the first way on nvidia: hipsys.SmallReadStager);
//   - stream waits: cuStreamSynchronize against a spin on a word of mapped pinned memory
//     that the stream itself writes (cuStreamWriteValue32) after the work, with and
//     without a cuStreamQuery after it, an event's wait and a cuStreamQuery spin; and the
//     same flag written 1.5 us after the launch instead of at once, and what the write
//     costs its caller (nvidia's completion flags: hipsys.FlaggingQueue).
//
// Each loop runs 1000 times per round, 31 rounds interleaved; the medians, their
// quartiles and the median ratio to the first loop are printed. Give a core to pin to:
//
//   cc -O2 -o waits waits.c -ldl && ./waits 3
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUevent;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice*, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuModuleLoadData)(CUmodule*, const void*);
static CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
static CUresult (*cuStreamCreate)(CUstream*, unsigned);
static CUresult (*cuStreamSynchronize)(CUstream);
static CUresult (*cuStreamQuery)(CUstream);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	unsigned, unsigned, CUstream, void**, void**);
static CUresult (*cuMemHostAlloc)(void**, size_t, unsigned);
static CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned);
static CUresult (*cuStreamWriteValue32)(CUstream, CUdeviceptr, uint32_t, unsigned);
static CUresult (*cuEventCreate)(CUevent*, unsigned);
static CUresult (*cuEventRecord)(CUevent, CUstream);
static CUresult (*cuEventSynchronize)(CUevent);
static CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
static CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
static CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);

// The empty kernel of anchor.c and the Go benchmarks.
static const char ptx[] = ".version 7.0\n.target sm_75\n.address_size 64\n\n.visible .entry empty()\n{\n\tret;\n}\n";

static void* lib;
static void* sym(const char* name) {
	void* p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "waits: %s not found\n", name);
		exit(1);
	}
	return p;
}

#define CK(x) \
	do { \
		CUresult r_ = (x); \
		if (r_) { \
			fprintf(stderr, "waits: %s: CUresult %d\n", #x, r_); \
			exit(1); \
		} \
	} while (0)

static double now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static CUfunction fn;
static CUstream st;
static CUevent ev;
static volatile uint32_t* flag; // mapped pinned memory the stream writes
static CUdeviceptr dflag;
static uint32_t seq;
static CUdeviceptr dword; // the device word the reads read
static volatile uint32_t* pinned; // where the async reads land
static uint32_t word;

static void launch(void) { CK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL)); }
static void flag_wait(void) {
	CK(cuStreamWriteValue32(st, dflag, ++seq, 0));
	while (*flag != seq) {
	}
}
static void launch_sync(void) {
	launch();
	CK(cuStreamSynchronize(st));
}
static void launch_flag(void) {
	launch();
	flag_wait();
}
static void launch_flag_query(void) {
	launch();
	flag_wait();
	(void)cuStreamQuery(st); // NOT_READY right after the flag: the write itself is still tracked
}
static void launch_event(void) {
	launch();
	CK(cuEventRecord(ev, st));
	CK(cuEventSynchronize(ev));
}
static void launch_query_spin(void) {
	launch();
	CUresult r;
	while ((r = cuStreamQuery(st)) == 600) { // CUDA_ERROR_NOT_READY
	}
	CK(r);
}
// pause spins for 1.5 us: what a caller does between a launch and its wait.
static void pause_1500(void) {
	double t0 = now_ns();
	while (now_ns() - t0 < 1500) {
	}
}
static void launch_pause_sync(void) {
	launch();
	pause_1500();
	CK(cuStreamSynchronize(st));
}
static void launch_pause_flag(void) {
	launch();
	pause_1500();
	flag_wait();
}
static void write_only(void) { CK(cuStreamWriteValue32(st, dflag, ++seq, 0)); }
static void read_pageable(void) { CK(cuMemcpyDtoH(&word, dword, 4)); }
static void read_pinned_sync(void) {
	CK(cuMemcpyDtoHAsync((void*)pinned, dword, 4, st));
	CK(cuStreamSynchronize(st));
	word = *pinned;
}
static void read_pinned_flag(void) {
	CK(cuMemcpyDtoHAsync((void*)pinned, dword, 4, st));
	flag_wait();
	word = *pinned;
}
static void idle_sync(void) { CK(cuStreamSynchronize(st)); }

static const struct {
	const char* name;
	void (*step)(void);
} loops[] = {
	{"launch + cuStreamSynchronize", launch_sync},
	{"launch + flag", launch_flag},
	{"launch + flag + cuStreamQuery", launch_flag_query},
	{"launch + event wait", launch_event},
	{"launch + cuStreamQuery spin", launch_query_spin},
	{"read 4 B, pageable", read_pageable},
	{"read 4 B, pinned + sync", read_pinned_sync},
	{"read 4 B, pinned + flag", read_pinned_flag},
	{"cuStreamSynchronize, idle", idle_sync},
	{"launch, 1.5 us, cuStreamSynchronize", launch_pause_sync},
	{"launch, 1.5 us, flag", launch_pause_flag},
	{"cuStreamWriteValue32 alone", write_only},
};
enum { LOOPS = sizeof loops / sizeof loops[0], ROUNDS = 31, N = 1000 };

static int cmp(const void* a, const void* b) {
	double x = *(const double*)a, y = *(const double*)b;
	return (x > y) - (x < y);
}

int main(int argc, char** argv) {
	lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "waits: no libcuda.so.1\n");
		return 1;
	}
	cuInit = sym("cuInit");
	cuDeviceGet = sym("cuDeviceGet");
	cuDevicePrimaryCtxRetain = sym("cuDevicePrimaryCtxRetain");
	cuCtxSetCurrent = sym("cuCtxSetCurrent");
	cuModuleLoadData = sym("cuModuleLoadData");
	cuModuleGetFunction = sym("cuModuleGetFunction");
	cuStreamCreate = sym("cuStreamCreate");
	cuStreamSynchronize = sym("cuStreamSynchronize");
	cuStreamQuery = sym("cuStreamQuery");
	cuLaunchKernel = sym("cuLaunchKernel");
	cuMemHostAlloc = sym("cuMemHostAlloc");
	cuMemHostGetDevicePointer = sym("cuMemHostGetDevicePointer_v2");
	cuStreamWriteValue32 = sym("cuStreamWriteValue32_v2");
	cuEventCreate = sym("cuEventCreate");
	cuEventRecord = sym("cuEventRecord");
	cuEventSynchronize = sym("cuEventSynchronize");
	cuMemAlloc = sym("cuMemAlloc_v2");
	cuMemcpyDtoH = sym("cuMemcpyDtoH_v2");
	cuMemcpyDtoHAsync = sym("cuMemcpyDtoHAsync_v2");

	CK(cuInit(0));
	CUdevice d;
	CK(cuDeviceGet(&d, 0));
	CUcontext c;
	CK(cuDevicePrimaryCtxRetain(&c, d));
	CK(cuCtxSetCurrent(c));
	CUmodule m;
	CK(cuModuleLoadData(&m, ptx));
	CK(cuModuleGetFunction(&fn, m, "empty"));
	CK(cuStreamCreate(&st, 1)); // CU_STREAM_NON_BLOCKING
	void* h;
	CK(cuMemHostAlloc(&h, 64, 0x1 | 0x2)); // PORTABLE | DEVICEMAP
	flag = h;
	*flag = 0;
	CK(cuMemHostGetDevicePointer(&dflag, h, 0));
	CK(cuEventCreate(&ev, 0x2)); // CU_EVENT_DISABLE_TIMING
	CK(cuMemAlloc(&dword, 4));
	CK(cuMemHostAlloc(&h, 64, 0));
	pinned = h;
	if (argc > 1) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(atoi(argv[1]), &one);
		if (sched_setaffinity(0, sizeof one, &one) != 0) fprintf(stderr, "waits: could not pin to core %s\n", argv[1]);
	}

	static double t[LOOPS][ROUNDS], ratio[LOOPS][ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		for (int l = 0; l < LOOPS; l++) {
			for (int i = 0; i < N / 20; i++) loops[l].step(); // warm
			double t0 = now_ns();
			for (int i = 0; i < N; i++) loops[l].step();
			t[l][r] = (now_ns() - t0) / N;
			CK(cuStreamSynchronize(st)); // what a loop left queued (the writes alone)
		}
		for (int l = 0; l < LOOPS; l++) ratio[l][r] = t[l][r] / t[0][r];
	}
	for (int l = 0; l < LOOPS; l++) {
		qsort(t[l], ROUNDS, sizeof(double), cmp);
		qsort(ratio[l], ROUNDS, sizeof(double), cmp);
		printf("%-32s %8.0f ns  (quartiles %.0f-%.0f)  x %.3f\n", loops[l].name, t[l][ROUNDS / 2], t[l][ROUNDS / 4],
			t[l][3 * ROUNDS / 4], ratio[l][ROUNDS / 2]);
	}
	return 0;
}
