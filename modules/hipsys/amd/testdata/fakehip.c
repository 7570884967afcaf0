// A stand-in libamdhip64 for tests on machines without an AMD GPU: it exports the HIP
// calls the amd platform resolves, backs "device" memory with malloc, and answers like a
// single gfx90a. Build variants:
//   -DOMIT_GRAPH_LAUNCH  lacks hipGraphLaunch (a library of the wrong kind)
//   -DR0600              exports hipGetDevicePropertiesR0600 with ROCm 6's layout
// FAKE_HIP_VERSION in the environment sets what hipRuntimeGetVersion reports.
#include <stdlib.h>
#include <string.h>

static int env(const char* name, int def) {
	const char* v = getenv(name);
	return v ? atoi(v) : def;
}

int hipRuntimeGetVersion(int* v) { *v = env("FAKE_HIP_VERSION", 50200000); return 0; }
int hipDriverGetVersion(int* v) { return hipRuntimeGetVersion(v); }
int hipGetDeviceCount(int* n) { *n = env("FAKE_HIP_DEVICES", 1); return *n ? 0 : 100; }
int hipDeviceGetAttribute(int* v, int attr, int dev) {
	if (dev != 0) return 101;
	*v = attr == 87 ? 64 : attr; // warp size 64; every other attribute reads its own number
	return 0;
}
int hipDeviceGetName(char* b, int len, int dev) {
	if (dev != 0) return 101;
	strncpy(b, "Fake Instinct", len);
	return 0;
}
int hipDeviceTotalMem(size_t* b, int dev) { *b = (size_t)64 << 30; return dev ? 101 : 0; }
#ifdef R0600
int hipGetDevicePropertiesR0600(char* p, int dev) {
	memset(p, 0, 1472);
	*(int*)(p + 308) = 64;
	strcpy(p + 1160, "gfx90a:sramecc+:xnack-");
	return dev ? 101 : 0;
}
#endif
int hipGetDeviceProperties(char* p, int dev) {
	memset(p, 0, 792);
	*(int*)(p + 276) = 64;
	strcpy(p + 396, "gfx90a:sramecc+:xnack-");
	return dev ? 101 : 0;
}
int hipSetDevice(int d) { return d == 0 ? 0 : 101; }
int hipGetDevice(int* d) { *d = 0; return 0; }
int hipDeviceSynchronize(void) { return 0; }
int hipMemGetInfo(size_t* f, size_t* t) { *f = 1 << 30; *t = (size_t)64 << 30; return 0; }

int hipMalloc(void** p, size_t n) { *p = malloc(n); return *p ? 0 : 2; }
int hipFree(void* p) { free(p); return 0; }
int hipHostMalloc(void** p, size_t n, unsigned f) { (void)f; return hipMalloc(p, n); }
int hipHostFree(void* p) { free(p); return 0; }
int hipMemsetD8(void* d, unsigned char v, size_t n) { memset(d, v, n); return 0; }
int hipMemsetD8Async(void* d, unsigned char v, size_t n, void* s) { (void)s; return hipMemsetD8(d, v, n); }
int hipMemcpyHtoD(void* d, void* s, size_t n) { memcpy(d, s, n); return 0; }
int hipMemcpyDtoH(void* d, void* s, size_t n) { memcpy(d, s, n); return 0; }
int hipMemcpyDtoD(void* d, void* s, size_t n) { memcpy(d, s, n); return 0; }
int hipMemcpyHtoDAsync(void* d, void* s, size_t n, void* st) { (void)st; memcpy(d, s, n); return 0; }
int hipMemcpyDtoHAsync(void* d, void* s, size_t n, void* st) { (void)st; memcpy(d, s, n); return 0; }
int hipMemcpyDtoDAsync(void* d, void* s, size_t n, void* st) { (void)st; memcpy(d, s, n); return 0; }
int hipMemcpy2D(char* d, size_t dp, const char* s, size_t sp, size_t w, size_t h, int kind) {
	(void)kind;
	for (size_t r = 0; r < h; r++) memcpy(d + r * dp, s + r * sp, w);
	return 0;
}
int hipMemcpy2DAsync(char* d, size_t dp, const char* s, size_t sp, size_t w, size_t h, int kind, void* st) {
	(void)st;
	return hipMemcpy2D(d, dp, s, sp, w, h, kind);
}

// Streams, events, graphs and modules are distinct heap cells: real, freeable handles.
static int make(void** out) { *out = malloc(16); return 0; }
int hipStreamCreateWithFlags(void** s, unsigned f) { (void)f; return make(s); }
int hipStreamQuery(void* s) { (void)s; return 0; }
int hipStreamSynchronize(void* s) { (void)s; return 0; }
int hipStreamWaitEvent(void* s, void* e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
int hipStreamDestroy(void* s) { free(s); return 0; }
int hipEventCreateWithFlags(void** e, unsigned f) { (void)f; return make(e); }
int hipEventRecord(void* e, void* s) { (void)e; (void)s; return 0; }
int hipEventQuery(void* e) { (void)e; return 600; } // always pending: the not-ready path
int hipEventSynchronize(void* e) { (void)e; return 0; }
int hipEventElapsedTime(float* ms, void* a, void* b) { (void)a; (void)b; *ms = 1.5f; return 0; }
int hipEventDestroy(void* e) { free(e); return 0; }
int hipModuleLoadData(void** m, const void* img) { (void)img; return make(m); }
int hipModuleGetFunction(void** f, void* m, const char* name) {
	(void)m;
	if (strcmp(name, "k") != 0) return 500; // hipErrorNotFound
	return make(f);
}
int hipModuleLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shm, void* s, void** params, void** extra) {
	(void)f; (void)gx; (void)gy; (void)gz; (void)by; (void)bz; (void)shm; (void)s; (void)extra;
	// The fake kernel k(int* out, int v) stores v at out[0], through kernelParams.
	if (bx == 0) return 9; // hipErrorInvalidConfiguration
	if (params) **(int**)params[0] = *(int*)params[1];
	return 0;
}
#ifdef COOPERATIVE
// The same fake kernel, launched cooperatively; a grid of more than 8 blocks is too large.
int hipModuleLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shm, void* s, void** params) {
	(void)f; (void)by; (void)bz; (void)shm; (void)s;
	if (bx == 0) return 9;                 // hipErrorInvalidConfiguration
	if (gx * gy * gz > 8) return 720;      // hipErrorCooperativeLaunchTooLarge
	if (params) **(int**)params[0] = *(int*)params[1];
	return 0;
}
#endif
// Four blocks of up to 256 threads per compute unit, one of larger blocks.
int hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void* f, int block, size_t shm) {
	(void)f; (void)shm;
	*n = block <= 256 ? 4 : 1;
	return 0;
}
int hipModuleUnload(void* m) { free(m); return 0; }
// The fake module has one variable, "table": 64 bytes of static memory.
static char table[64];
int hipModuleGetGlobal(void** p, size_t* n, void* m, const char* name) {
	(void)m;
	if (strcmp(name, "table") != 0) return 500; // hipErrorNotFound
	*p = table;
	*n = sizeof table;
	return 0;
}
int hipStreamBeginCapture(void* s, int mode) { (void)s; (void)mode; return 0; }
int hipStreamEndCapture(void* s, void** g) { (void)s; return make(g); }
int hipStreamIsCapturing(void* s, int* st) { (void)s; *st = 0; return 0; }
static void* nodes[2];
int hipGraphGetNodes(void* g, void** out, size_t* n) {
	(void)g;
	if (!nodes[0]) { make(&nodes[0]); make(&nodes[1]); }
	if (out) { out[0] = nodes[0]; out[1] = nodes[1]; }
	*n = 2;
	return 0;
}
int hipGraphNodeGetType(void* node, int* t) { *t = node == nodes[0] ? 0 : 1; return 0; }
int hipGraphInstantiate(void** e, void* g, void* en, char* log, size_t sz) {
	(void)g; (void)en; (void)log; (void)sz;
	return make(e);
}
#ifndef OMIT_GRAPH_LAUNCH
int hipGraphLaunch(void* e, void* s) { (void)e; (void)s; return 0; }
#endif
int hipGraphExecDestroy(void* e) { free(e); return 0; }
int hipGraphDestroy(void* g) { free(g); return 0; }

// Peers: FAKE_HIP_DEVICES devices that all reach each other; the current device is 0.
int hipDeviceCanAccessPeer(int* v, int dev, int peer) {
	int n = env("FAKE_HIP_DEVICES", 1);
	if (dev < 0 || dev >= n || peer < 0 || peer >= n) return 101;
	*v = dev != peer;
	return 0;
}
static int peer_enabled[64];
int hipDeviceEnablePeerAccess(int peer, unsigned flags) {
	(void)flags;
	if (peer <= 0 || peer >= env("FAKE_HIP_DEVICES", 1) || peer >= 64) return 101;
	if (peer_enabled[peer]) return 704;
	peer_enabled[peer] = 1;
	return 0;
}
int hipMemcpyPeerAsync(void* d, int dd, const void* s, int sd, size_t n, void* st) {
	(void)dd; (void)sd; (void)st;
	memcpy(d, s, n);
	return 0;
}
