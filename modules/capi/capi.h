/* Declarations shared by the library's Go and C files; not part of the public header. */
#ifndef CUBEHIP_CAPI_H
#define CUBEHIP_CAPI_H
#include <stddef.h>
#include "cubehip.h"

/* const-qualified names for the exports' parameters: cgo writes an exported function's
 * prototype from its Go parameter types, and a typedef is how a const reaches it, so the
 * generated prototypes match include/cubehip.h's exactly (the compiler checks that, since
 * this file and the generated ones both declare them). */
typedef const char capi_cchar;
typedef const void capi_cvoid;
typedef const uint32_t capi_cu32;
typedef const cubehip_device_options capi_cdevice_options;
typedef const cubehip_kernel_desc capi_ckernel_desc;
typedef const cubehip_module_desc capi_cmodule_desc;
typedef const cubehip_arg capi_carg;

void capi_set_last_error(const char* msg, size_t n);
/* Empties the calling thread's message: a call that succeeds leaves "" behind. */
void capi_clear_last_error(void);
void capi_set_last_reports(const cubehip_check_report* r, size_t n, size_t total);
void capi_get_last_reports(cubehip_check_report* out, size_t cap, size_t* count, size_t* total);

/* The benchmarks' C loops (benchloop.c): op is one of these. */
enum {
	CAPI_BENCH_SIZE,
	CAPI_BENCH_CHECK,
	CAPI_BENCH_LAUNCH,
	CAPI_BENCH_LAUNCH_SYNC,
	CAPI_BENCH_READ4,
	CAPI_BENCH_WRITE4,
	CAPI_BENCH_ALLOC_RELEASE,
	CAPI_BENCH_PROFILE,
	CAPI_BENCH_SYNC,
	CAPI_BENCH_REPLAY,
	CAPI_BENCH_OPS
};
int capi_bench_pin(void);
void capi_bench_unpin(void);
double capi_bench_run(int op, uint64_t dev, uint64_t buf, uint64_t kernel, uint64_t graph, int n, cubehip_status* status);
int capi_bench_call(void (*fn)(void*), void* arg);
#endif
