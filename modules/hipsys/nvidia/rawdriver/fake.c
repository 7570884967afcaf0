// The fake driver entries (rawdriver.h): recording stand-ins for cuLaunchKernel and
// cuFuncGetParamInfo.
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "rawdriver.h"

// The recording, allocated by the first rawd_fake_reset: a binary that never runs the
// queue tests carries a few pointers, not the log.
static uintptr_t* fake_fn;
static uint64_t* fake_arg;
static uintptr_t* fake_thread;
static int fake_n;
static uintptr_t fake_refuse; // calls for this function are refused
static unsigned fake_delay_us;

// The parameter layout fake_param_info reports, for every function but fake_refuse.
static uint64_t fake_offsets[RAWD_FAKE_PARAMS], fake_sizes[RAWD_FAKE_PARAMS];
static int fake_nparams;

enum { CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_CONTEXT = 201 };

// fake_launch records the function, the first 8 bytes of its first argument and the
// calling thread, after delay_us; it refuses fake_refuse with CUDA_ERROR_INVALID_VALUE.
static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		unsigned by, unsigned bz, unsigned shmem, CUstream s, void** params, void** extra) {
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s, (void)extra;
	if (fake_delay_us) usleep(fake_delay_us);
	int i = __atomic_fetch_add(&fake_n, 1, __ATOMIC_SEQ_CST);
	if (fake_fn && i < RAWD_FAKE_MAX) {
		fake_fn[i] = (uintptr_t)f;
		fake_arg[i] = params ? *(uint64_t*)params[0] : 0;
		fake_thread[i] = (uintptr_t)pthread_self();
	}
	return (uintptr_t)f == fake_refuse ? CUDA_ERROR_INVALID_VALUE : 0;
}

// fake_param_info answers as cuFuncGetParamInfo does: the index-th parameter's offset
// and size, CUDA_ERROR_INVALID_VALUE past the last; fake_refuse gets
// CUDA_ERROR_INVALID_CONTEXT.
static CUresult fake_param_info(CUfunction f, size_t index, size_t* offset, size_t* size) {
	if ((uintptr_t)f == fake_refuse) return CUDA_ERROR_INVALID_CONTEXT;
	if (index >= (size_t)fake_nparams) return CUDA_ERROR_INVALID_VALUE;
	*offset = fake_offsets[index];
	*size = fake_sizes[index];
	return 0;
}

void* rawd_fake_launch_entry(void) { return (void*)fake_launch; }
void* rawd_fake_param_info_entry(void) { return (void*)fake_param_info; }

void rawd_fake_reset(uintptr_t refuse, unsigned delay_us) {
	if (!fake_fn) {
		fake_fn = calloc(RAWD_FAKE_MAX, sizeof *fake_fn);
		fake_arg = calloc(RAWD_FAKE_MAX, sizeof *fake_arg);
		fake_thread = calloc(RAWD_FAKE_MAX, sizeof *fake_thread);
	}
	__atomic_store_n(&fake_n, 0, __ATOMIC_SEQ_CST);
	fake_refuse = refuse;
	fake_delay_us = delay_us;
}

void rawd_fake_set_params(const uint64_t* offsets, const uint64_t* sizes, int n) {
	if (n > RAWD_FAKE_PARAMS) n = RAWD_FAKE_PARAMS;
	for (int i = 0; i < n; i++) {
		fake_offsets[i] = offsets[i];
		fake_sizes[i] = sizes[i];
	}
	fake_nparams = n;
}

int rawd_fake_count(void) { return __atomic_load_n(&fake_n, __ATOMIC_SEQ_CST); }

void rawd_fake_call(int i, uintptr_t* fn, uint64_t* arg, uintptr_t* thread) {
	*fn = fake_fn[i];
	*arg = fake_arg[i];
	*thread = fake_thread[i];
}

uintptr_t rawd_thread_self(void) { return (uintptr_t)pthread_self(); }
