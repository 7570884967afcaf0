// NVRTC as cubehip calls it: the types and prototypes declared by hand (no CUDA headers
// at build time), the entry points resolved from libnvrtc at the first hiprtc call, and
// one trampoline per call. NVRTC needs no context.
#ifndef CUBEHIP_NVRTC_H
#define CUBEHIP_NVRTC_H

#include <stddef.h>
#include <stdint.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;

struct cubehip_nvrtc {
	void *version, *getNumSupportedArchs, *getSupportedArchs, *createProgram, *compileProgram,
		*destroyProgram, *getProgramLogSize, *getProgramLog, *getCUBINSize, *getCUBIN,
		*getPTXSize, *getPTX;
};
extern struct cubehip_nvrtc cubehip_nvrtc;

#define NVFN(field, ...) ((nvrtcResult(*)(__VA_ARGS__))cubehip_nvrtc.field)

static inline nvrtcResult nv_version(int* major, int* minor) { return NVFN(version, int*, int*)(major, minor); }
static inline nvrtcResult nv_archs(int* out, int cap, int* n) {
	if (!cubehip_nvrtc.getNumSupportedArchs || !cubehip_nvrtc.getSupportedArchs) { *n = 0; return 0; }
	nvrtcResult r = NVFN(getNumSupportedArchs, int*)(n);
	if (r || *n > cap) { *n = 0; return r; }
	return NVFN(getSupportedArchs, int*)(out);
}
static inline nvrtcResult nv_create(uintptr_t* p, const char* src, const char* name, int nh,
		char** headers, char** names) {
	nvrtcProgram h = NULL;
	nvrtcResult r = NVFN(createProgram, nvrtcProgram*, const char*, const char*, int,
		const char* const*, const char* const*)(&h, src, name, nh, (const char* const*)headers,
		(const char* const*)names);
	*p = (uintptr_t)h;
	return r;
}
static inline nvrtcResult nv_compile(uintptr_t p, int n, char** opts) {
	return NVFN(compileProgram, nvrtcProgram, int, const char* const*)((nvrtcProgram)p, n, (const char* const*)opts);
}
static inline nvrtcResult nv_destroy(uintptr_t p) {
	nvrtcProgram h = (nvrtcProgram)p;
	return NVFN(destroyProgram, nvrtcProgram*)(&h);
}
static inline nvrtcResult nv_log_size(uintptr_t p, size_t* n) { return NVFN(getProgramLogSize, nvrtcProgram, size_t*)((nvrtcProgram)p, n); }
static inline nvrtcResult nv_log(uintptr_t p, char* out) { return NVFN(getProgramLog, nvrtcProgram, char*)((nvrtcProgram)p, out); }
static inline nvrtcResult nv_code_size(uintptr_t p, int cubin, size_t* n) {
	if (cubin) return NVFN(getCUBINSize, nvrtcProgram, size_t*)((nvrtcProgram)p, n);
	return NVFN(getPTXSize, nvrtcProgram, size_t*)((nvrtcProgram)p, n);
}
static inline nvrtcResult nv_code(uintptr_t p, int cubin, char* out) {
	if (cubin) return NVFN(getCUBIN, nvrtcProgram, char*)((nvrtcProgram)p, out);
	return NVFN(getPTX, nvrtcProgram, char*)((nvrtcProgram)p, out);
}

#endif
