// The trampolines of package nvidia (prototypes in trampolines.h; ffi.go says what holds
// for them all): one C function per driver or NVRTC call Go makes, so that each call
// crosses from Go into C once. Every trampoline that needs a context begins with
// ENSURE: the launches queued on the calling thread's current device are issued first
// (queue.h), then that device's primary context is made current (driver.h).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trampolines.h"

// Storage for the headers' declarations: one definition per process.
struct cubehip_cu cubehip_cu;
struct cubehip_nvrtc cubehip_nvrtc;
CUcontext cubehip_primary[CUBEHIP_MAX_DEVICES];
__thread int cubehip_tls_dev;
__thread CUcontext cubehip_tls_ctx;
cubehip_queue* cubehip_queues[CUBEHIP_MAX_DEVICES];

// cubehip_settle issues the launches queued on the calling thread's current device;
// with no queue held there, it reads one pointer.
static inline void cubehip_settle(void) {
	cubehip_queue* q = __atomic_load_n(&cubehip_queues[cubehip_tls_dev], __ATOMIC_ACQUIRE);
	if (__builtin_expect(q != NULL, 0)) cubehip_q_settle(q);
}

static inline CUresult cubehip_ensure(void) {
	cubehip_settle();
	return cubehip_ensure_ctx();
}

#define ENSURE() \
	do { \
		CUresult _r = cubehip_ensure(); \
		if (_r) return _r; \
	} while (0)

// Open.

CUresult cu_init(void) { return cubehip_cu.init(0); }
CUresult cu_device_count(int* n) { return cubehip_cu.deviceGetCount(n); }
CUresult cu_retain(int ordinal) {
	CUdevice d;
	CUresult r = cubehip_cu.deviceGet(&d, ordinal);
	if (r) return r;
	return cubehip_cu.primaryCtxRetain(&cubehip_primary[ordinal], d);
}

// Devices.

int cu_get_dev(void) { return cubehip_tls_dev; }
CUresult cu_set_dev(int d) {
	cubehip_tls_dev = d;
	return cubehip_ensure();
}
CUresult cu_device_attr(int* v, int attr, int ordinal) {
	CUdevice d;
	CUresult r = cubehip_cu.deviceGet(&d, ordinal);
	if (r) return r;
	return cubehip_cu.deviceGetAttribute(v, attr, d);
}
CUresult cu_device_name(char* buf, int len, int ordinal) {
	CUdevice d;
	CUresult r = cubehip_cu.deviceGet(&d, ordinal);
	if (r) return r;
	return cubehip_cu.deviceGetName(buf, len, d);
}
CUresult cu_device_total_mem(size_t* v, int ordinal) {
	CUdevice d;
	CUresult r = cubehip_cu.deviceGet(&d, ordinal);
	if (r) return r;
	return cubehip_cu.deviceTotalMem(v, d);
}
CUresult cu_ctx_sync(void) {
	ENSURE();
	return cubehip_cu.ctxSynchronize();
}
CUresult cu_mem_info(size_t* free, size_t* total) {
	ENSURE();
	return cubehip_cu.memGetInfo(free, total);
}

// Memory.

// cu_pointer_info asks the driver what p is: its memory type, the ordinal of the device
// it belongs to, and the allocation holding it (its start and size), in one call (the
// import's range check; four cuPointerGetAttribute calls cost four lookups). For an
// address no CUDA allocation holds, cuPointerGetAttributes succeeds with a memory type
// of 0: that is CUDA_ERROR_INVALID_VALUE here, as cuPointerGetAttribute answers it.
CUresult cu_pointer_info(CUdeviceptr p, unsigned* type, int* ordinal, CUdeviceptr* start, size_t* size) {
	int attrs[4] = {2 /* MEMORY_TYPE */, 9 /* DEVICE_ORDINAL */, 11 /* RANGE_START_ADDR */, 12 /* RANGE_SIZE */};
	void* data[4] = {type, ordinal, start, size};
	ENSURE();
	*type = 0;
	CUresult r = cubehip_cu.pointerGetAttributes(4, attrs, data, p);
	if (r) return r;
	return *type == 0 ? 1 /* CUDA_ERROR_INVALID_VALUE */ : 0;
}

CUresult cu_mem_alloc(CUdeviceptr* p, size_t n) {
	ENSURE();
	return cubehip_cu.memAlloc(p, n);
}
CUresult cu_mem_free(CUdeviceptr p) {
	ENSURE();
	return cubehip_cu.memFree(p);
}
CUresult cu_host_alloc(uintptr_t* p, size_t n, unsigned flags) {
	ENSURE();
	void* h = NULL;
	CUresult r = cubehip_cu.memHostAlloc(&h, n, flags);
	*p = (uintptr_t)h;
	return r;
}
CUresult cu_host_free(uintptr_t p) {
	ENSURE();
	return cubehip_cu.memFreeHost((void*)p);
}
CUresult cu_memset(CUdeviceptr d, unsigned char v, size_t n) {
	ENSURE();
	return cubehip_cu.memsetD8(d, v, n);
}
CUresult cu_memset_async(CUdeviceptr d, unsigned char v, size_t n, uintptr_t s) {
	ENSURE();
	return cubehip_cu.memsetD8Async(d, v, n, (CUstream)s);
}
CUresult cu_memcpy_htod(CUdeviceptr d, const void* h, size_t n) {
	ENSURE();
	return cubehip_cu.memcpyHtoD(d, h, n);
}
CUresult cu_memcpy_dtoh(void* h, CUdeviceptr d, size_t n) {
	ENSURE();
	return cubehip_cu.memcpyDtoH(h, d, n);
}
CUresult cu_memcpy_dtod(CUdeviceptr d, CUdeviceptr s, size_t n) {
	ENSURE();
	return cubehip_cu.memcpyDtoD(d, s, n);
}
CUresult cu_memcpy_htod_async(CUdeviceptr d, uintptr_t h, size_t n, uintptr_t s) {
	ENSURE();
	return cubehip_cu.memcpyHtoDAsync(d, (const void*)h, n, (CUstream)s);
}
CUresult cu_memcpy_dtoh_async(uintptr_t h, CUdeviceptr d, size_t n, uintptr_t s) {
	ENSURE();
	return cubehip_cu.memcpyDtoHAsync((void*)h, d, n, (CUstream)s);
}
static uint32_t flag_write(uintptr_t s, uintptr_t fp);
// cu_memcpy_dtoh_async_flag is cu_memcpy_dtoh_async followed, when the copy was queued,
// by the write of flag fp (its value in token, 0 when none was queued).
CUresult cu_memcpy_dtoh_async_flag(uintptr_t h, CUdeviceptr d, size_t n, uintptr_t s, uintptr_t fp, uint32_t* token) {
	*token = 0;
	CUresult r = cu_memcpy_dtoh_async(h, d, n, s);
	if (r == 0 && fp) *token = flag_write(s, fp);
	return r;
}
CUresult cu_memcpy_dtod_async(CUdeviceptr d, CUdeviceptr src, size_t n, uintptr_t s) {
	ENSURE();
	return cubehip_cu.memcpyDtoDAsync(d, src, n, (CUstream)s);
}
CUresult cu_memcpy_2d(uintptr_t dst, int dstType, size_t dpitch, uintptr_t src, int srcType,
		size_t spitch, size_t width, size_t height, int async, uintptr_t s) {
	ENSURE();
	CUDA_MEMCPY2D c = {0};
	c.srcMemoryType = srcType;
	if (srcType == CU_MEMORYTYPE_HOST) c.srcHost = (const void*)src; else c.srcDevice = src;
	c.srcPitch = spitch;
	c.dstMemoryType = dstType;
	if (dstType == CU_MEMORYTYPE_HOST) c.dstHost = (void*)dst; else c.dstDevice = dst;
	c.dstPitch = dpitch;
	c.WidthInBytes = width;
	c.Height = height;
	if (async) return cubehip_cu.memcpy2DAsync(&c, (CUstream)s);
	return cubehip_cu.memcpy2D(&c);
}

// Streams and events.

CUresult cu_stream_create(uintptr_t* s, unsigned flags) {
	ENSURE();
	CUstream h = NULL;
	CUresult r = cubehip_cu.streamCreate(&h, flags);
	*s = (uintptr_t)h;
	return r;
}
CUresult cu_stream_query(uintptr_t s) {
	ENSURE();
	return cubehip_cu.streamQuery((CUstream)s);
}
CUresult cu_stream_sync(uintptr_t s) {
	ENSURE();
	return cubehip_cu.streamSynchronize((CUstream)s);
}
CUresult cu_stream_wait_event(uintptr_t s, uintptr_t e, unsigned flags) {
	ENSURE();
	return cubehip_cu.streamWaitEvent((CUstream)s, (CUevent)e, flags);
}
CUresult cu_stream_destroy(uintptr_t s) {
	ENSURE();
	return cubehip_cu.streamDestroy((CUstream)s);
}
CUresult cu_event_create(uintptr_t* e, unsigned flags) {
	ENSURE();
	CUevent h = NULL;
	CUresult r = cubehip_cu.eventCreate(&h, flags);
	*e = (uintptr_t)h;
	return r;
}
CUresult cu_event_record(uintptr_t e, uintptr_t s) {
	ENSURE();
	return cubehip_cu.eventRecord((CUevent)e, (CUstream)s);
}
CUresult cu_event_query(uintptr_t e) {
	ENSURE();
	return cubehip_cu.eventQuery((CUevent)e);
}
CUresult cu_event_sync(uintptr_t e) {
	ENSURE();
	return cubehip_cu.eventSynchronize((CUevent)e);
}
CUresult cu_event_elapsed(float* ms, uintptr_t a, uintptr_t b) {
	ENSURE();
	return cubehip_cu.eventElapsedTime(ms, (CUevent)a, (CUevent)b);
}
CUresult cu_event_destroy(uintptr_t e) {
	ENSURE();
	return cubehip_cu.eventDestroy((CUevent)e);
}

// Modules and launches.

CUresult cu_module_load(uintptr_t* m, const void* image, size_t n) {
	ENSURE();
	// A copy with a NUL after it: PTX is loaded as a C string, and the Go image is not
	// terminated. A CUBIN ignores the extra byte.
	char* c = malloc(n + 1);
	if (!c) return 2; // CUDA_ERROR_OUT_OF_MEMORY
	memcpy(c, image, n);
	c[n] = 0;
	CUmodule h = NULL;
	CUresult r = cubehip_cu.moduleLoadData(&h, c);
	free(c);
	*m = (uintptr_t)h;
	return r;
}
CUresult cu_module_function(uintptr_t* f, uintptr_t m, const char* name) {
	ENSURE();
	CUfunction h = NULL;
	CUresult r = cubehip_cu.moduleGetFunction(&h, (CUmodule)m, name);
	*f = (uintptr_t)h;
	return r;
}
CUresult cu_module_unload(uintptr_t m) {
	ENSURE();
	return cubehip_cu.moduleUnload((CUmodule)m);
}
CUresult cu_module_global(CUdeviceptr* p, size_t* size, uintptr_t m, const char* name) {
	ENSURE();
	return cubehip_cu.moduleGetGlobal(p, size, (CUmodule)m, name);
}
CUresult cu_func_get_attr(int* v, int attr, uintptr_t f) {
	ENSURE();
	return cubehip_cu.funcGetAttribute(v, attr, (CUfunction)f);
}
CUresult cu_func_set_attr(uintptr_t f, int attr, int v) {
	ENSURE();
	return cubehip_cu.funcSetAttribute((CUfunction)f, attr, v);
}
int cu_has_param_info(void) { return cubehip_cu.funcGetParamInfo != NULL; }
CUresult cu_func_param_info(uintptr_t f, size_t index, size_t* offset, size_t* size) {
	ENSURE();
	return cubehip_cu.funcGetParamInfo((CUfunction)f, index, offset, size);
}

// launch issues a launch through entry (cuLaunchKernel, or a queue's recording one in
// tests) with the argument pointers built on this stack from the packed block: offs[i]
// is where argument i starts in buf.
static inline CUresult launch(cu_launch_kernel_fn entry, uintptr_t f, unsigned gx, unsigned gy,
		unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s,
		const uint8_t* buf, const uint32_t* offs, int n) {
	if (n > CUBEHIP_MAX_ARGS) return CUBEHIP_TOO_MANY_ARGS;
	void* params[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) params[i] = (void*)(buf + offs[i]);
	return entry((CUfunction)f, gx, gy, gz, bx, by, bz, shmem, (CUstream)s, n > 0 ? params : NULL, NULL);
}

CUresult cu_launch(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
		const uint32_t* offs, int n) {
	ENSURE();
	return launch(cubehip_cu.launchKernel, f, gx, gy, gz, bx, by, bz, shmem, s, buf, offs, n);
}

// cu_launch_coop is cu_launch through cuLaunchCooperativeKernel, which takes no extra.
CUresult cu_launch_coop(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
		const uint32_t* offs, int n) {
	if (!cubehip_cu.launchCooperativeKernel) return 801; // CUDA_ERROR_NOT_SUPPORTED: no driver resolved it
	if (n > CUBEHIP_MAX_ARGS) return CUBEHIP_TOO_MANY_ARGS;
	ENSURE();
	void* params[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) params[i] = (void*)(buf + offs[i]);
	return cubehip_cu.launchCooperativeKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shmem, (CUstream)s, n > 0 ? params : NULL);
}
CUresult cu_occupancy(int* blocks, uintptr_t f, int block, size_t shmem) {
	if (!cubehip_cu.occupancyMaxActiveBlocksPerMultiprocessor) return 801;
	ENSURE();
	return cubehip_cu.occupancyMaxActiveBlocksPerMultiprocessor(blocks, (CUfunction)f, block, shmem);
}

// Graphs.

CUresult cu_begin_capture(uintptr_t s, int mode) {
	ENSURE();
	return cubehip_cu.streamBeginCapture((CUstream)s, mode);
}
CUresult cu_end_capture(uintptr_t s, uintptr_t* g) {
	ENSURE();
	CUgraph h = NULL;
	CUresult r = cubehip_cu.streamEndCapture((CUstream)s, &h);
	*g = (uintptr_t)h;
	return r;
}
CUresult cu_is_capturing(uintptr_t s, int* status) {
	ENSURE();
	return cubehip_cu.streamIsCapturing((CUstream)s, status);
}
CUresult cu_graph_nodes(uintptr_t g, uintptr_t* nodes, size_t* n) {
	ENSURE();
	return cubehip_cu.graphGetNodes((CUgraph)g, (CUgraphNode*)nodes, n);
}
CUresult cu_node_type(uintptr_t node, int* t) {
	ENSURE();
	return cubehip_cu.graphNodeGetType((CUgraphNode)node, t);
}
CUresult cu_graph_instantiate(uintptr_t* e, uintptr_t g) {
	ENSURE();
	CUgraphExec h = NULL;
	CUresult r = cubehip_cu.graphInstantiate(&h, (CUgraph)g, 0);
	*e = (uintptr_t)h;
	return r;
}
CUresult cu_graph_upload(uintptr_t e, uintptr_t s) {
	ENSURE();
	return cubehip_cu.graphUpload((CUgraphExec)e, (CUstream)s);
}
CUresult cu_graph_launch(uintptr_t e, uintptr_t s) {
	ENSURE();
	return cubehip_cu.graphLaunch((CUgraphExec)e, (CUstream)s);
}
CUresult cu_graph_exec_destroy(uintptr_t e) {
	ENSURE();
	return cubehip_cu.graphExecDestroy((CUgraphExec)e);
}
CUresult cu_graph_destroy(uintptr_t g) {
	ENSURE();
	return cubehip_cu.graphDestroy((CUgraph)g);
}

// The launch queue.

// cu_q_direct issues a launch on the calling thread, as cu_launch does, but through the
// queue's launch entry and without settling the queue (the caller found it empty): the
// run of launches goes on. With a flag, a launch the driver took is followed by the
// flag's write (below), whose value is returned in token (0: none queued).
CUresult cu_q_direct(cubehip_queue* q, uintptr_t f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, uintptr_t s, const uint8_t* buf,
		const uint32_t* offs, int n, uintptr_t flag, uint32_t* token) {
	*token = 0;
	if (cubehip_tls_dev != q->dev) return CUBEHIP_NOT_CURRENT;
	CUresult r = cubehip_ensure_ctx();
	if (r) return r;
	r = launch(q->launch, f, gx, gy, gz, bx, by, bz, shmem, s, buf, offs, n);
	if (r == 0 && flag) *token = flag_write(s, flag);
	return r;
}

// cu_settle_current is ENSURE's first step alone, and cu_swap_dev sets the calling
// thread's current device without making its context current: the queue's tests drive
// a device no machine has, whose context does not exist.
void cu_settle_current(void) { cubehip_settle(); }
int cu_swap_dev(int d) {
	int old = cubehip_tls_dev;
	cubehip_tls_dev = d;
	return old;
}

// NVRTC.

nvrtcResult nv_version(int* major, int* minor) { return cubehip_nvrtc.version(major, minor); }
nvrtcResult nv_archs(int* out, int cap, int* n) {
	if (!cubehip_nvrtc.getNumSupportedArchs || !cubehip_nvrtc.getSupportedArchs) {
		*n = 0;
		return 0;
	}
	nvrtcResult r = cubehip_nvrtc.getNumSupportedArchs(n);
	if (r || *n > cap) {
		*n = 0;
		return r;
	}
	return cubehip_nvrtc.getSupportedArchs(out);
}
nvrtcResult nv_create(uintptr_t* p, const char* src, const char* name, int nh, char** headers,
		char** names) {
	nvrtcProgram h = NULL;
	nvrtcResult r = cubehip_nvrtc.createProgram(&h, src, name, nh, (const char* const*)headers,
		(const char* const*)names);
	*p = (uintptr_t)h;
	return r;
}
nvrtcResult nv_compile(uintptr_t p, int n, char** opts) {
	return cubehip_nvrtc.compileProgram((nvrtcProgram)p, n, (const char* const*)opts);
}
nvrtcResult nv_destroy(uintptr_t p) {
	nvrtcProgram h = (nvrtcProgram)p;
	return cubehip_nvrtc.destroyProgram(&h);
}
nvrtcResult nv_log_size(uintptr_t p, size_t* n) { return cubehip_nvrtc.getProgramLogSize((nvrtcProgram)p, n); }
nvrtcResult nv_log(uintptr_t p, char* out) { return cubehip_nvrtc.getProgramLog((nvrtcProgram)p, out); }
nvrtcResult nv_code_size(uintptr_t p, int cubin, size_t* n) {
	if (cubin) return cubehip_nvrtc.getCUBINSize((nvrtcProgram)p, n);
	return cubehip_nvrtc.getPTXSize((nvrtcProgram)p, n);
}
nvrtcResult nv_add_name(uintptr_t p, const char* expr) {
	return cubehip_nvrtc.addNameExpression((nvrtcProgram)p, expr);
}
/* *out points into the program, valid until it is destroyed. */
nvrtcResult nv_lowered(uintptr_t p, const char* expr, const char** out) {
	return cubehip_nvrtc.getLoweredName((nvrtcProgram)p, expr, out);
}
nvrtcResult nv_code(uintptr_t p, int cubin, char* out) {
	if (cubin) return cubehip_nvrtc.getCUBIN((nvrtcProgram)p, out);
	return cubehip_nvrtc.getPTX((nvrtcProgram)p, out);
}

// Peers: cuMemcpyPeerAsync and cuCtxEnablePeerAccess take contexts, and a device's
// context here is always its primary one, retained at Open.

CUresult cu_can_access_peer(int* v, int dev, int peer) {
	CUdevice a, b;
	CUresult r = cubehip_cu.deviceGet(&a, dev);
	if (r) return r;
	r = cubehip_cu.deviceGet(&b, peer);
	if (r) return r;
	return cubehip_cu.deviceCanAccessPeer(v, a, b);
}
CUresult cu_enable_peer(int peer, unsigned flags) {
	ENSURE();
	return cubehip_cu.ctxEnablePeerAccess(cubehip_primary[peer], flags);
}
CUresult cu_memcpy_peer_async(CUdeviceptr d, int dstDev, CUdeviceptr src, int srcDev, size_t n, uintptr_t s) {
	ENSURE();
	return cubehip_cu.memcpyPeerAsync(d, cubehip_primary[dstDev], src, cubehip_primary[srcDev], n, (CUstream)s);
}

// Stream completion flags: how a caller that launches and then waits sees its work done
// sooner than cuStreamSynchronize lets it. A direct launch that the server expects to be
// waited for next is followed, in the same call, by a write of a fresh value into a word
// of mapped pinned memory on the stream (cuStreamWriteValue32); the wait spins on the word.
// The GPU writes it once everything queued before it is done, and the host sees it a load
// later, without the driver's own bookkeeping after the work, which the caller of
// cuStreamSynchronize waits through (bench/waits.c). The write must follow the launch at
// once: written later (as a wait could queue it), it lands after the driver's own wait
// would have returned, since it first has to reach the GPU (docs/benchmarks.md,
// "Completion flags").
//
// A fault ends a context's work for good, so the word of a stream whose work faulted is
// never written: after spin_ns without it the wait becomes cuStreamSynchronize, which
// waits on with the driver's own policy and reports the fault. So does a wait for work
// longer than the spin.
//
// Invariants (the flag wait returns success only when all of them hold; each is what
// keeps a read after the wait from seeing bytes the flagged work had not yet written):
//
//  1. The write keeps its memory barrier: CUBEHIP_FLAG_WRITE_FLAGS is
//     CU_STREAM_WRITE_VALUE_DEFAULT (0). With CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER (1)
//     the word could become visible before the kernel's own writes to device memory, and
//     a copy issued after the wait could read them stale.
//  2. The waiter loads the word with acquire order, so what it reads after seeing the
//     value was written before it.
//  3. A stream's values only grow (taken and queued under mu), compared by wrapping
//     difference: a word that passed token means every write up to token landed.
//  4. Never on a capturing stream (the write would become a graph node and replays
//     would write stale values); a refused write yields token 0, and the caller waits
//     with cuStreamSynchronize.
#define CUBEHIP_FLAG_WRITE_FLAGS 0u /* CU_STREAM_WRITE_VALUE_DEFAULT: with the memory barrier */
#define CUBEHIP_FLAG_MEMORY_FLAGS (0x1u /* PORTABLE */ | 0x2u /* DEVICEMAP */)
struct cu_flag {
	// mu orders taking a value with queueing its write, so the values a stream writes
	// only grow and a waiter that sees a later one knows its own was passed.
	pthread_mutex_t mu;
	uint32_t seq;             // the value the stream's last queued write stores
	volatile uint32_t* word;  // mapped pinned memory, written by the stream
	CUdeviceptr dword;        // word, as the device addresses it
};

int cu_flags_supported(void) {
	return cubehip_cu.memHostGetDevicePointer != NULL && cubehip_cu.streamWriteValue32 != NULL;
}

// cu_flag_new makes a flag on the calling thread's current device. Its memory is never
// freed (flags are recycled, streamflag.go): a destroyed stream's queued writes may still
// land in it. PORTABLE: a stream of any context may write it.
CUresult cu_flag_new(uintptr_t* out) {
	ENSURE();
	void* h;
	CUresult r = cubehip_cu.memHostAlloc(&h, 64, CUBEHIP_FLAG_MEMORY_FLAGS);
	if (r) return r;
	CUdeviceptr d;
	if ((r = cubehip_cu.memHostGetDevicePointer(&d, h, 0))) {
		cubehip_cu.memFreeHost(h);
		return r;
	}
	cu_flag* f = calloc(1, sizeof *f);
	if (f == NULL) {
		cubehip_cu.memFreeHost(h);
		return 2; // CUDA_ERROR_OUT_OF_MEMORY
	}
	pthread_mutex_init(&f->mu, NULL);
	f->word = h;
	*f->word = 0;
	f->dword = d;
	*out = (uintptr_t)f;
	return 0;
}

// flags_refused is set once the driver answers a flag's write with
// CUDA_ERROR_NOT_SUPPORTED: no write is tried again.
static int flags_refused;

// flag_write queues flag fp's next value on stream s and returns it; 0 when nothing was
// queued. Never on a capturing stream: the write would become a node of the graph (and
// replays would write old values), so a launch captured there is not flagged. A refused
// write is no launch's failure: its launch waits with cuStreamSynchronize, which reports
// whatever the refusal meant.
static uint32_t flag_write(uintptr_t s, uintptr_t fp) {
	if (__atomic_load_n(&flags_refused, __ATOMIC_RELAXED)) return 0;
	int capturing = 0;
	if (cubehip_cu.streamIsCapturing((CUstream)s, &capturing) || capturing) return 0;
	cu_flag* f = (cu_flag*)fp;
	pthread_mutex_lock(&f->mu);
	uint32_t seq = f->seq + 1;
	if (seq == 0) seq = 1; // 0 is "no write"
	CUresult r = cubehip_cu.streamWriteValue32((CUstream)s, f->dword, seq, CUBEHIP_FLAG_WRITE_FLAGS);
	if (r == 0) f->seq = seq;
	pthread_mutex_unlock(&f->mu);
	if (r == 801 /* CUDA_ERROR_NOT_SUPPORTED */) __atomic_store_n(&flags_refused, 1, __ATOMIC_RELAXED);
	return r == 0 ? seq : 0;
}

CUresult cu_stream_wait_flag(uintptr_t s, uintptr_t fp, uint32_t token, uint64_t spin_ns) {
	ENSURE();
	cu_flag* f = (cu_flag*)fp;
	uint64_t start = cubehip_now_ns();
	for (;;) {
		for (int i = 0; i < 64; i++) {
			// Wrapping difference: the word lags token by the writes still in flight, far
			// fewer than 2^31, so "passed" is never read from an old value.
			if ((int32_t)(__atomic_load_n(f->word, __ATOMIC_ACQUIRE) - token) >= 0) return 0;
			cubehip_cpu_relax();
		}
		if (cubehip_now_ns() - start > spin_ns) break;
	}
	return cubehip_cu.streamSynchronize((CUstream)s);
}
