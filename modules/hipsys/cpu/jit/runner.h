/* runner.h: the jit's C side in the Go binary (runner.c, dlfcn.c). */
#ifndef CUBEHIP_RUNNER_H
#define CUBEHIP_RUNNER_H
#include <stdint.h>
#include "prelude/cubehip_abi.h"
#include "fault.h"

/* Runs one launch to completion: blocks spread over the worker pool (or inline on the
 * calling thread for small launches); with coop, every block at once, each on an OS thread
 * of its own, with the grid's barrier (cubehip_grid). buf/offs are read before any block
 * runs and not kept. Returns 0, a hipError_t, CUBEHIP_FAULTED with *fault saying what a
 * faulting kernel did (fault.h), or CUBEHIP_MISUSED with fault->code the CUBEHIP_MISUSE_*
 * construct a kernel met that its launch cannot run (cubehip_abi.h). With use_shared, every
 * thread running its blocks gives them its shared arena, static_shared bytes of static
 * variables and shared bytes of dynamic buffer (cubehip_abi.h's cubehip_arena); stop is
 * the launch's time limit (fault.h), NULL for none. */
int cubehip_run(void* entry, const void* buf, uint32_t len, const uint32_t* offs, uint32_t nargs,
                uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz,
                uint32_t shared, uint64_t static_shared, int use_shared, int barrier, int coop, cubehip_stop* stop,
                cubehip_fault* fault);
#define CUBEHIP_MISUSED (-2)
/* Threads a large launch runs on: the pool's workers plus the caller. */
int cubehip_pool_threads(void);
/* The span of every shared arena's mapping so far (runner.c), for the checker. */
extern uint64_t cubehip_arena_min, cubehip_arena_max;

void* cubehip_dlopen(const char* path, char* err, int errlen);
void* cubehip_dlsym(void* h, const char* name);
int cubehip_dlclose(void* h);
unsigned cubehip_call_sig(void* fn, cubehip_param* params, unsigned cap);
unsigned cubehip_call_abi(void* fn);
int cubehip_call_layout(void* fn, uint64_t* static_size);
#endif
