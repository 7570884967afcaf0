// C trampolines for package amd: see ffi.go for why they exist and what holds for each.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

// Shapes of HIP calls, grouped by signature: f(int*), f(h) and so on.
int amdt_int_p(void* f, int* out) { return ((int (*)(int*))f)(out); }
int amdt_int_i(void* f, int a) { return ((int (*)(int))f)(a); }
int amdt_void(void* f) { return ((int (*)(void))f)(); }
int amdt_h(void* f, uintptr_t h) { return ((int (*)(void*))f)((void*)h); }
int amdt_hh(void* f, uintptr_t a, uintptr_t b) { return ((int (*)(void*, void*))f)((void*)a, (void*)b); }
int amdt_hhu(void* f, uintptr_t a, uintptr_t b, unsigned c) {
	return ((int (*)(void*, void*, unsigned))f)((void*)a, (void*)b, c);
}
int amdt_hi(void* f, uintptr_t h, int i) { return ((int (*)(void*, int))f)((void*)h, i); }
// hipStreamCreateWithFlags, hipEventCreateWithFlags: f(handle*, unsigned).
int amdt_create(void* f, uintptr_t* out, unsigned flags) {
	return ((int (*)(void**, unsigned))f)((void**)out, flags);
}
// hipStreamEndCapture, hipStreamIsCapturing, hipGraphInstantiate (NULL, NULL, 0) and
// hipGraphNodeGetType all take a handle and one out-parameter.
int amdt_h_out(void* f, uintptr_t h, void* out) { return ((int (*)(void*, void*))f)((void*)h, out); }
int amdt_instantiate(void* f, uintptr_t* exec, uintptr_t graph) {
	return ((int (*)(void**, void*, void*, char*, size_t))f)((void**)exec, (void*)graph, NULL, NULL, 0);
}
int amdt_attr(void* f, int* out, int attr, int dev) { return ((int (*)(int*, int, int))f)(out, attr, dev); }
int amdt_devname(void* f, char* buf, int len, int dev) { return ((int (*)(char*, int, int))f)(buf, len, dev); }
int amdt_size_i(void* f, size_t* out, int dev) { return ((int (*)(size_t*, int))f)(out, dev); }
int amdt_two_sizes(void* f, size_t* a, size_t* b) { return ((int (*)(size_t*, size_t*))f)(a, b); }
/* hipPointerAttribute_t starts with the memory type (a 4-byte enum) and the device (an
 * int) in every ROCm from 5.2; the rest (pointers, flags) is not read, and the buffer is
 * larger than any version's struct. */
int amdt_pointer_attrs(void* f, uintptr_t p, int* type, int* device) {
	int attrs[32] = {0};
	int r = ((int (*)(void*, void*))f)(attrs, (void*)p);
	*type = attrs[0];
	*device = attrs[1];
	return r;
}
int amdt_address_range(void* f, uintptr_t p, uintptr_t* base, size_t* size) {
	void* b = NULL;
	int r = ((int (*)(void**, size_t*, void*))f)(&b, size, (void*)p);
	*base = (uintptr_t)b;
	return r;
}
int amdt_props(void* f, void* props, int dev) { return ((int (*)(void*, int))f)(props, dev); }
int amdt_alloc(void* f, uintptr_t* out, size_t n) { return ((int (*)(void**, size_t))f)((void**)out, n); }
int amdt_hostalloc(void* f, uintptr_t* out, size_t n, unsigned flags) {
	return ((int (*)(void**, size_t, unsigned))f)((void**)out, n, flags);
}
int amdt_memset(void* f, uintptr_t dst, unsigned char v, size_t n) {
	return ((int (*)(void*, unsigned char, size_t))f)((void*)dst, v, n);
}
int amdt_memset_async(void* f, uintptr_t dst, unsigned char v, size_t n, uintptr_t s) {
	return ((int (*)(void*, unsigned char, size_t, void*))f)((void*)dst, v, n, (void*)s);
}
// hipMemcpyHtoD/DtoH/DtoD: dst and src are device addresses or the caller's Go memory.
int amdt_memcpy(void* f, void* dst, void* src, size_t n) {
	return ((int (*)(void*, void*, size_t))f)(dst, src, n);
}
int amdt_memcpy_async(void* f, uintptr_t dst, uintptr_t src, size_t n, uintptr_t s) {
	return ((int (*)(void*, void*, size_t, void*))f)((void*)dst, (void*)src, n, (void*)s);
}
int amdt_memcpy2d(void* f, uintptr_t dst, size_t dp, uintptr_t src, size_t sp, size_t w, size_t h, int kind) {
	return ((int (*)(void*, size_t, void*, size_t, size_t, size_t, int))f)((void*)dst, dp, (void*)src, sp, w, h, kind);
}
int amdt_memcpy2d_async(void* f, uintptr_t dst, size_t dp, uintptr_t src, size_t sp, size_t w, size_t h,
                            int kind, uintptr_t s) {
	return ((int (*)(void*, size_t, void*, size_t, size_t, size_t, int, void*))f)((void*)dst, dp, (void*)src, sp,
	                                                                               w, h, kind, (void*)s);
}
int amdt_elapsed(void* f, float* ms, uintptr_t a, uintptr_t b) {
	return ((int (*)(float*, void*, void*))f)(ms, (void*)a, (void*)b);
}
int amdt_module_load(void* f, uintptr_t* out, void* image) {
	return ((int (*)(void**, const void*))f)((void**)out, image);
}
int amdt_get_function(void* f, uintptr_t* out, uintptr_t mod, char* name) {
	return ((int (*)(void**, void*, const char*))f)((void**)out, (void*)mod, name);
}
// hipModuleGetGlobal(hipDeviceptr_t*, size_t*, hipModule_t, const char*).
int amdt_get_global(void* f, uintptr_t* out, size_t* size, uintptr_t mod, char* name) {
	return ((int (*)(void**, size_t*, void*, const char*))f)((void**)out, size, (void*)mod, name);
}
// hipModuleLaunchKernel. kernelParams is one pointer per argument into the packed block,
// built here so that no Go pointer is stored in memory C reads; a launch with up to 64
// arguments builds it on the stack, which keeps the launch path free of malloc.
int amdt_launch(void* f, uintptr_t fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                    unsigned bz, unsigned shm, uintptr_t s, unsigned char* buf, uint32_t* offs, int n) {
	void* stack[64];
	void** params = stack;
	if (n > 64) {
		params = malloc(sizeof(void*) * (size_t)n);
		if (!params) return 2; // hipErrorOutOfMemory
	}
	for (int i = 0; i < n; i++) params[i] = buf + offs[i];
	int r = ((int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
	                  void**))f)((void*)fn, gx, gy, gz, bx, by, bz, shm, (void*)s, n ? params : NULL, NULL);
	if (params != stack) free(params);
	return r;
}
// hipModuleLaunchCooperativeKernel: hipModuleLaunchKernel's arguments without extra.
int amdt_launch_coop(void* f, uintptr_t fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                     unsigned bz, unsigned shm, uintptr_t s, unsigned char* buf, uint32_t* offs, int n) {
	void* stack[64];
	void** params = stack;
	if (n > 64) {
		params = malloc(sizeof(void*) * (size_t)n);
		if (!params) return 2; // hipErrorOutOfMemory
	}
	for (int i = 0; i < n; i++) params[i] = buf + offs[i];
	int r = ((int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**))f)(
	    (void*)fn, gx, gy, gz, bx, by, bz, shm, (void*)s, n ? params : NULL);
	if (params != stack) free(params);
	return r;
}
// hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int*, hipFunction_t, int, size_t).
int amdt_occupancy(void* f, int* blocks, uintptr_t fn, int block, size_t shm) {
	return ((int (*)(int*, void*, int, size_t))f)(blocks, (void*)fn, block, shm);
}
// hipFuncGetAttribute(int*, hipFunction_attribute, hipFunction_t).
int amdt_func_attr(void* f, int* value, int attr, uintptr_t fn) {
	return ((int (*)(int*, int, void*))f)(value, attr, (void*)fn);
}
int amdt_graph_nodes(void* f, uintptr_t g, uintptr_t* nodes, size_t* n) {
	return ((int (*)(void*, void**, size_t*))f)((void*)g, (void**)nodes, n);
}
// hiprtc.
int amdt_rtc_create(void* f, uintptr_t* prog, char* src, char* name, int nh, char** hdrs, char** names) {
	return ((int (*)(void**, const char*, const char*, int, const char**, const char**))f)(
	    (void**)prog, src, name, nh, (const char**)hdrs, (const char**)names);
}
int amdt_rtc_compile(void* f, uintptr_t prog, int n, char** opts) {
	return ((int (*)(void*, int, const char**))f)((void*)prog, n, (const char**)opts);
}
int amdt_rtc_size(void* f, uintptr_t prog, size_t* n) { return ((int (*)(void*, size_t*))f)((void*)prog, n); }
int amdt_rtc_get(void* f, uintptr_t prog, char* out) { return ((int (*)(void*, char*))f)((void*)prog, out); }
int amdt_rtc_destroy(void* f, uintptr_t prog) {
	void* p = (void*)prog;
	return ((int (*)(void**))f)(&p);
}
int amdt_rtc_version(void* f, int* major, int* minor) { return ((int (*)(int*, int*))f)(major, minor); }
int amdt_rtc_add_name(void* f, uintptr_t prog, char* expr) {
	return ((int (*)(void*, const char*))f)((void*)prog, expr);
}
/* *out points into the program, valid until it is destroyed. */
int amdt_rtc_lowered(void* f, uintptr_t prog, char* expr, const char** out) {
	return ((int (*)(void*, const char*, const char**))f)((void*)prog, expr, out);
}
// comgr's ISA list (amd_comgr_get_isa_count / amd_comgr_get_isa_name).
int amdt_isa_count(void* f, size_t* n) { return ((int (*)(size_t*))f)(n); }
int amdt_isa_name(void* f, size_t i, char* out, size_t cap) {
	const char* s = NULL;
	int r = ((int (*)(size_t, const char**))f)(i, &s);
	if (r != 0 || !s) return r ? r : 1;
	size_t k = 0;
	for (; s[k] && k + 1 < cap; k++) out[k] = s[k];
	out[k] = 0;
	return 0;
}
// The file a symbol was loaded from, to find the ROCm tree the library belongs to.
int amdt_lib_path(void* sym, char* out, size_t cap) {
	Dl_info info;
	if (!dladdr(sym, &info) || !info.dli_fname) return 1;
	size_t k = 0;
	for (; info.dli_fname[k] && k + 1 < cap; k++) out[k] = info.dli_fname[k];
	out[k] = 0;
	return 0;
}

// hipDeviceCanAccessPeer, hipDeviceEnablePeerAccess, hipMemcpyPeerAsync.
int amdt_can_access_peer(void* f, int* v, int dev, int peer) {
	return ((int (*)(int*, int, int))f)(v, dev, peer);
}
int amdt_enable_peer(void* f, int peer, unsigned flags) {
	return ((int (*)(int, unsigned))f)(peer, flags);
}
int amdt_memcpy_peer_async(void* f, uintptr_t dst, int dstDev, uintptr_t src, int srcDev, size_t n, uintptr_t s) {
	return ((int (*)(void*, int, const void*, int, size_t, void*))f)((void*)dst, dstDev, (const void*)src, srcDev, n,
	                                                                  (void*)s);
}
