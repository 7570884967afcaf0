// NVRTC as cubehip calls it, declared by hand (no CUDA headers at build time): its types,
// one function-pointer type per call signature and the table of entry points resolved
// from libnvrtc at the first hiprtc call (rtc.go). NVRTC needs no context.
#ifndef CUBEHIP_NVRTC_H
#define CUBEHIP_NVRTC_H

#include <stddef.h>
#include <stdint.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;

typedef nvrtcResult (*nv_two_ints_fn)(int*, int*);
typedef nvrtcResult (*nv_intp_fn)(int*);
typedef nvrtcResult (*nv_create_fn)(nvrtcProgram*, const char*, const char*, int,
	const char* const*, const char* const*);
typedef nvrtcResult (*nv_compile_fn)(nvrtcProgram, int, const char* const*);
typedef nvrtcResult (*nv_destroy_fn)(nvrtcProgram*);
typedef nvrtcResult (*nv_size_fn)(nvrtcProgram, size_t*);
typedef nvrtcResult (*nv_get_fn)(nvrtcProgram, char*);
typedef nvrtcResult (*nv_add_name_fn)(nvrtcProgram, const char*);
typedef nvrtcResult (*nv_lowered_fn)(nvrtcProgram, const char*, const char**);

// getNumSupportedArchs and getSupportedArchs are optional (NVRTC 11.2 and later).
struct cubehip_nvrtc {
	nv_two_ints_fn version;
	nv_intp_fn getNumSupportedArchs, getSupportedArchs;
	nv_create_fn createProgram;
	nv_compile_fn compileProgram;
	nv_destroy_fn destroyProgram;
	nv_size_fn getProgramLogSize, getCUBINSize, getPTXSize;
	nv_get_fn getProgramLog, getCUBIN, getPTX;
	nv_add_name_fn addNameExpression;
	nv_lowered_fn getLoweredName;
};
extern struct cubehip_nvrtc cubehip_nvrtc;

#endif
