// anchor: the raw CUDA driver API figures of a plain C program, with the shapes the
// nvidia platform's benchmarks use (an empty PTX kernel, one non-blocking stream,
// 4-byte reads, 1 MiB allocations, 256 MiB copies). The benchmarks run the same loops
// inside their own process (package rawdriver) and pair with those; this program gives
// the figures of a process with no Go runtime in it, and `cubehip bench -anchor` reads
// its pageable-copy rates.
//
// It loads libcuda.so.1 itself and declares the few prototypes it needs, so it builds
// with the system C compiler and no CUDA headers:
//
//   cc -O2 -o anchor anchor.c -ldl
//
// Each line printed is "anchor <name> <value> <unit>". Counts can be scaled with
// ANCHOR_SCALE.
#include <dlfcn.h>
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
typedef void* CUgraph;
typedef void* CUgraphExec;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice*, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuModuleLoadData)(CUmodule*, const void*);
static CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
static CUresult (*cuStreamCreate)(CUstream*, unsigned);
static CUresult (*cuStreamSynchronize)(CUstream);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	unsigned, unsigned, CUstream, void**, void**);
static CUresult (*cuStreamBeginCapture)(CUstream, int);
static CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
static CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
static CUresult (*cuGraphUpload)(CUgraphExec, CUstream);
static CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
static CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
static CUresult (*cuMemFree)(CUdeviceptr);
static CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
static CUresult (*cuMemHostAlloc)(void**, size_t, unsigned);
static CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
static CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);

// The same kernel the Go benchmarks launch (ptx_test.go's emptyPTX).
static const char empty_ptx[] =
	".version 7.0\n.target sm_75\n.address_size 64\n\n.visible .entry empty()\n{\n\tret;\n}\n";

static void* lib;
static void* sym(const char* name) {
	void* p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "anchor: libcuda.so.1 has no %s\n", name);
		exit(2);
	}
	return p;
}

#define CHECK(call) \
	do { \
		CUresult r_ = (call); \
		if (r_) { \
			fprintf(stderr, "anchor: %s failed: %d (line %d)\n", #call, r_, __LINE__); \
			exit(1); \
		} \
	} while (0)

static double now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static CUcontext ctx;

// replay launches ge n times on st and prints the time per replay.
static void replay(CUgraphExec ge, CUstream st, int n) {
	double t = now_us();
	for (int i = 0; i < n; i++) CHECK(cuGraphLaunch(ge, st));
	CHECK(cuStreamSynchronize(st));
	printf("anchor replay %.3f us/replay\n", (now_us() - t) / n);
}

// init loads the driver and retains device 0's primary context.
static void init(void) {
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "anchor: cannot load libcuda.so.1: %s\n", dlerror());
		exit(2);
	}
	cuInit = sym("cuInit");
	cuDeviceGet = sym("cuDeviceGet");
	cuDevicePrimaryCtxRetain = sym("cuDevicePrimaryCtxRetain");
	cuCtxSetCurrent = sym("cuCtxSetCurrent");
	cuModuleLoadData = sym("cuModuleLoadData");
	cuModuleGetFunction = sym("cuModuleGetFunction");
	cuStreamCreate = sym("cuStreamCreate");
	cuStreamSynchronize = sym("cuStreamSynchronize");
	cuLaunchKernel = sym("cuLaunchKernel");
	cuStreamBeginCapture = sym("cuStreamBeginCapture_v2");
	cuStreamEndCapture = sym("cuStreamEndCapture");
	cuGraphInstantiateWithFlags = sym("cuGraphInstantiateWithFlags");
	cuGraphUpload = sym("cuGraphUpload");
	cuGraphLaunch = sym("cuGraphLaunch");
	cuMemAlloc = sym("cuMemAlloc_v2");
	cuMemFree = sym("cuMemFree_v2");
	cuMemcpyDtoH = sym("cuMemcpyDtoH_v2");
	cuMemcpyHtoD = sym("cuMemcpyHtoD_v2");
	cuMemHostAlloc = sym("cuMemHostAlloc");
	cuMemcpyHtoDAsync = sym("cuMemcpyHtoDAsync_v2");
	cuMemcpyDtoHAsync = sym("cuMemcpyDtoHAsync_v2");

	CUdevice dev;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
}

// run measures each figure in turn.
static void run(void) {
	double scale = getenv("ANCHOR_SCALE") ? atof(getenv("ANCHOR_SCALE")) : 1.0;
	int nLaunch = 100000 * scale, nSync = 20000 * scale, nAlloc = 2000 * scale, nPinned = 20 * scale;
	if (nPinned < 1) nPinned = 1;

	CHECK(cuCtxSetCurrent(ctx));
	CUmodule mod;
	CUfunction fn;
	CUstream st;
	CHECK(cuModuleLoadData(&mod, empty_ptx));
	CHECK(cuModuleGetFunction(&fn, mod, "empty"));
	CHECK(cuStreamCreate(&st, 1)); // CU_STREAM_NON_BLOCKING
	for (int i = 0; i < 100; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL));
	CHECK(cuStreamSynchronize(st));

	double t = now_us();
	for (int i = 0; i < nLaunch; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL));
	CHECK(cuStreamSynchronize(st));
	printf("anchor launch %.3f us/launch\n", (now_us() - t) / nLaunch);

	t = now_us();
	for (int i = 0; i < nSync; i++) {
		CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL));
		CHECK(cuStreamSynchronize(st));
	}
	printf("anchor launchsync %.3f us/launchsync\n", (now_us() - t) / nSync);

	CUgraph g;
	CUgraphExec ge;
	CHECK(cuStreamBeginCapture(st, 2)); // CU_STREAM_CAPTURE_MODE_RELAXED
	for (int i = 0; i < 10; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL));
	CHECK(cuStreamEndCapture(st, &g));
	CHECK(cuGraphInstantiateWithFlags(&ge, g, 0));
	CHECK(cuGraphUpload(ge, st));
	CHECK(cuStreamSynchronize(st));
	replay(ge, st, nSync);

	t = now_us();
	for (int i = 0; i < nAlloc; i++) {
		CUdeviceptr d;
		CHECK(cuMemAlloc(&d, 1 << 20));
		CHECK(cuMemFree(d));
	}
	printf("anchor allocfree %.3f us/allocfree\n", (now_us() - t) / nAlloc);

	CUdeviceptr d4;
	char buf[4];
	CHECK(cuMemAlloc(&d4, 4));
	t = now_us();
	for (int i = 0; i < nSync; i++) CHECK(cuMemcpyDtoH(buf, d4, 4));
	printf("anchor read %.3f us/read\n", (now_us() - t) / nSync);

	const size_t big = 256u << 20;
	void* h;
	CUdeviceptr db;
	CHECK(cuMemHostAlloc(&h, big, 0));
	CHECK(cuMemAlloc(&db, big));
	for (int up = 1; up >= 0; up--) {
		if (up) CHECK(cuMemcpyHtoDAsync(db, h, big, st));
		else CHECK(cuMemcpyDtoHAsync(h, db, big, st));
		CHECK(cuStreamSynchronize(st));
		t = now_us();
		for (int i = 0; i < nPinned; i++) {
			if (up) CHECK(cuMemcpyHtoDAsync(db, h, big, st));
			else CHECK(cuMemcpyDtoHAsync(h, db, big, st));
		}
		CHECK(cuStreamSynchronize(st));
		printf("anchor %s %.3f GB/s\n", up ? "htod" : "dtoh", (double)big * nPinned / ((now_us() - t) * 1e3));
	}

	// Pageable copies: ordinary malloc'ed memory, the rate the server's staged writes and
	// reads of Go memory are held to (twice the upload rate, at least the download rate).
	char* pg = malloc(big);
	if (!pg) { fprintf(stderr, "anchor: malloc %zu failed\n", big); exit(2); }
	for (size_t i = 0; i < big; i += 4096) pg[i] = (char)i;
	for (int up = 1; up >= 0; up--) {
		if (up) CHECK(cuMemcpyHtoD(db, pg, big));
		else CHECK(cuMemcpyDtoH(pg, db, big));
		t = now_us();
		for (int i = 0; i < nPinned; i++) {
			if (up) CHECK(cuMemcpyHtoD(db, pg, big));
			else CHECK(cuMemcpyDtoH(pg, db, big));
		}
		printf("anchor %s %.3f GB/s\n", up ? "pageable-htod" : "pageable-dtoh", (double)big * nPinned / ((now_us() - t) * 1e3));
	}
	free(pg);
}

int main(void) {
	init();
	run();
	return 0;
}
