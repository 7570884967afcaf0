// anchor: the raw CUDA driver API figures that the nvidia platform's benchmarks
// (bench_test.go) are held to, measured with the same shapes in the same run.
//
// It loads libcuda.so.1 itself and declares the few prototypes it needs, so it builds
// with the system C compiler and no CUDA headers:
//
//   cc -O2 -o anchor anchor.c -ldl -lpthread
//
// Each line printed is "anchor <name> <value> <unit>"; scripts/gpu-test.sh pairs the
// names with the Go benchmarks' metrics. Counts can be scaled with ANCHOR_SCALE.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
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
static CUresult (*cuStreamQuery)(CUstream);
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
static CUresult (*cuGraphDestroy)(CUgraph);

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
static void hist(const char* name, double* t, int n);

// replay launches ge n times on st and prints the time per replay; it (n entries)
// receives each iteration's start for hist.
static void replay(const char* name, CUgraphExec ge, CUstream st, int n, double* it) {
	double t = now_us();
	for (int i = 0; i < n; i++) {
		it[i] = now_us();
		CHECK(cuGraphLaunch(ge, st));
	}
	CHECK(cuStreamSynchronize(st));
	printf("anchor %s %.3f us/replay\n", name, (now_us() - t) / n);
	for (int i = 0; i + 1 < n; i++) it[i] = it[i + 1] - it[i];
	hist(name, it, n - 1);
}

// hist prints, with ANCHOR_HIST set, the spread of per-iteration times (µs) of a loop:
// a mean pulled up by rare stalls reads differently from a slower typical iteration.
static int cmp_double(const void* a, const void* b) {
	double x = *(const double*)a, y = *(const double*)b;
	return x < y ? -1 : x > y;
}
static void hist(const char* name, double* t, int n) {
	if (!getenv("ANCHOR_HIST") || n < 2) return;
	qsort(t, n, sizeof *t, cmp_double);
	printf("hist %s p10 %.3f p50 %.3f p90 %.3f p99 %.3f max %.3f\n", name, t[n / 10], t[n / 2],
		t[n * 9 / 10], t[n * 99 / 100], t[n - 1]);
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
	cuStreamQuery = sym("cuStreamQuery");
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
	cuGraphDestroy = sym("cuGraphDestroy");

	CUdevice dev;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
}

// run measures, on the calling thread.
static void* run(void* unused) {
	(void)unused;
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

	t = now_us();
	for (int i = 0; i < nSync; i++) CHECK(cuStreamQuery(st));
	printf("anchor query %.3f us/query\n", (now_us() - t) / nSync);

	CUgraph g;
	CUgraphExec ge;
	CHECK(cuStreamBeginCapture(st, 2)); // CU_STREAM_CAPTURE_MODE_RELAXED
	for (int i = 0; i < 10; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL));
	CHECK(cuStreamEndCapture(st, &g));
	CHECK(cuGraphInstantiateWithFlags(&ge, g, 0));
	CHECK(cuGraphUpload(ge, st));
	CHECK(cuStreamSynchronize(st));
	double* it = malloc(sizeof(double) * nSync);
	replay("replay", ge, st, nSync, it);

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
	for (int i = 0; i < nSync; i++) {
		it[i] = now_us();
		CHECK(cuMemcpyDtoH(buf, d4, 4));
	}
	printf("anchor read %.3f us/read\n", (now_us() - t) / nSync);
	for (int i = 0; i + 1 < nSync; i++) it[i] = it[i + 1] - it[i];
	hist("read", it, nSync - 1);

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

	// The same replay once the null stream has had work (the copies above), then once a
	// second stream has had launches and a graph of its own: the driver replays faster
	// while one stream only has had work, and the second regime lasts for the rest of
	// the process (bench_test.go's BenchmarkGraphReplayMulti is held to replay-multi).
	replay("replay-late", ge, st, nSync, it);
	CUstream st2;
	CUgraph g2;
	CUgraphExec ge2;
	CHECK(cuStreamCreate(&st2, 1));
	for (int i = 0; i < 1000; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st2, NULL, NULL));
	CHECK(cuStreamSynchronize(st2));
	CHECK(cuStreamBeginCapture(st2, 2));
	for (int i = 0; i < 10; i++) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st2, NULL, NULL));
	CHECK(cuStreamEndCapture(st2, &g2));
	CHECK(cuGraphInstantiateWithFlags(&ge2, g2, 0));
	CHECK(cuGraphDestroy(g2));
	for (int i = 0; i < 1000; i++) CHECK(cuGraphLaunch(ge2, st2));
	CHECK(cuStreamSynchronize(st2));
	replay("replay-multi", ge, st, nSync, it);
	free(it);
	return NULL;
}

static void* idle(void* unused) {
	(void)unused;
	for (;;) pause();
	return NULL;
}

static void* init_and_run(void* unused) {
	init();
	return run(unused);
}

// Variants that reproduce one difference of a Go process at a time, to place a gap
// between these figures and cubehip's: ANCHOR_THREAD=1 measures on a thread of its own
// (Go's calls never run on the main thread), ANCHOR_THREAD=2 also loads the driver on
// the main thread and measures on another (as Open and a later call do), and
// ANCHOR_IDLE=n keeps n idle threads beside it (as a Go runtime does).
int main(void) {
	const char* idle_n = getenv("ANCHOR_IDLE");
	for (int i = 0; idle_n && i < atoi(idle_n); i++) {
		pthread_t th;
		pthread_create(&th, NULL, idle, NULL);
	}
	const char* mode = getenv("ANCHOR_THREAD");
	if (!mode) {
		init_and_run(NULL);
		return 0;
	}
	if (mode[0] == '2') init();
	pthread_t th;
	if (pthread_create(&th, NULL, mode[0] == '2' ? run : init_and_run, NULL) || pthread_join(th, NULL)) return 1;
	return 0;
}
