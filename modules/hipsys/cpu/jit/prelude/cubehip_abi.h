/* cubehip_abi.h: the contract between the jit's runner (runner.c, built into the Go
 * binary) and every kernel object the jit compiles (cubehip_prelude.h). Both sides
 * include this one file, and its bytes are part of the prelude hash in every cache key, so
 * an object built against another layout is never taken from the cache; Load also checks
 * cubehip_abi_version() because an image may come from elsewhere. */
#ifndef CUBEHIP_ABI_H
#define CUBEHIP_ABI_H

#include <stdint.h>

#define CUBEHIP_ABI_VERSION 5
#define CUBEHIP_MAX_THREADS 1024       /* threads per block, as on AMD GPUs */
/* Shared bytes per block, static and dynamic together (hipDeviceProp sharedMemPerBlock):
 * 160 KiB, AMD MI355X's LDS and within what NVIDIA's opt-in gives a block on an H100 or
 * H200, so kernels sized for a GPU's large shared memory run here too. A block's shared
 * memory lives in its OS thread's shared arena (cubehip_arena), apart from every other
 * state of the runtime. */
#define CUBEHIP_MAX_SHARED (160 * 1024)
#define CUBEHIP_MAX_PARAM_BYTES 4096   /* HIP's kernel argument limit */
#define CUBEHIP_MAX_ARGS 1024
#define CUBEHIP_FIBER_STACK (64 * 1024) /* per-thread stack of a barrier kernel, guard page included */

#ifdef __cplusplus
extern "C" {
#endif

/* The grid of a launch, as cooperative groups' grid_group sees it (cubehip_cg.h). In a
 * cooperative launch every block runs at once, each on an OS thread of its own, and sync
 * is the grid-wide barrier: it returns once every block still running has called it (a
 * block that returned is not waited for), 0, or nonzero when the launch is ending (a block
 * faulted) and the caller must not go on. sync is NULL in a launch that is not
 * cooperative, whose blocks do not all run at once. A kernel that meets a grid-wide
 * construct its launch cannot run stores one of CUBEHIP_MISUSE_* in misuse and traps, and
 * the runner names the construct in the launch's error. */
typedef struct cubehip_grid {
	int (*sync)(struct cubehip_grid* grid);
	int misuse;
} cubehip_grid;
#define CUBEHIP_MISUSE_GRID_SYNC 1   /* this_grid().sync() in a launch that is not cooperative */
#define CUBEHIP_MISUSE_GRID_UNSEEN 2 /* this_grid().sync() in a kernel whose threads run one after another */

/* One launch, as the runner hands it to an entry: params[i] points at argument i inside a
 * 16-byte aligned copy of the packed argument block that lives for the whole launch. */
typedef struct cubehip_launch {
	void** params;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared; /* dynamic shared bytes asked for (checked against CUBEHIP_MAX_SHARED) */
	cubehip_grid* coop; /* never NULL */
} cubehip_launch;

/* What the runner lends the OS thread running a range of blocks. base: fiber stacks,
 * CUBEHIP_MAX_THREADS stacks of CUBEHIP_FIBER_STACK bytes, the lowest page of each a
 * guard, reused by every barrier launch on that thread; NULL for kernels without
 * barriers. shared: the thread's shared arena, a mapping of its own with inaccessible
 * pages below and above it, whose first static_size bytes are read-write (the module's static
 * __shared__ variables, at the offsets cubehip_shared_layout gave them); dyn: the
 * launch's dynamic shared buffer of dyn_size bytes, ending at the arena's upper guard
 * page (rounded up to 64 bytes below it). Between the two, pages no launch needs are
 * inaccessible. Both NULL when the launch uses no shared memory. */
typedef struct cubehip_arena {
	char* base;
	char* shared;
	char* dyn;
	uint64_t static_size;
	uint64_t dyn_size;
} cubehip_arena;

/* cubehip_run_<entry>: runs blocks [first, end) (linear block index, x fastest) of a
 * launch on the calling thread; returns 0. */
typedef int (*cubehip_entry_fn)(const cubehip_launch* launch, uint64_t first, uint64_t end, cubehip_arena* arena);

/* One kernel parameter as the compiler sees its type: sizeof, alignof, and whether it is
 * a pointer (a device buffer) or a value (a scalar or a struct passed by copy). */
typedef struct cubehip_param {
	uint32_t size;
	uint32_t align;
	uint32_t pointer; /* 1 for a pointer type */
} cubehip_param;

/* cubehip_shared_layout: lays out the module's static __shared__ variables (once; the
 * runner calls it after loading) and stores the bytes a block's static shared memory
 * takes in *static_size; nonzero when the module declares more variables than it can
 * record. */
typedef int (*cubehip_layout_fn)(uint64_t* static_size);

/* cubehip_sig_<entry>: describes each kernel parameter (up to cap of them) and returns
 * how many the kernel takes, so the Go side checks a launch's arguments and lays out the
 * parameter block without calling into the kernel. */
typedef unsigned (*cubehip_sig_fn)(cubehip_param* params, unsigned cap);

#ifdef __cplusplus
}
#endif
#endif
