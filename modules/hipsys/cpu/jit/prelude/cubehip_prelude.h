/* cubehip_prelude.h: HIP's device side on the host CPU. The jit -includes it before every
 * kernel source, and <hip/hip_runtime.h> maps to it, so sources compile with or without
 * that include.
 *
 * Execution model (see the runner, runner.c): one OS thread runs one block at a time;
 * the block's threads run on that thread either as a plain loop (modules that never call
 * __syncthreads) or as fibers that switch at every barrier. Hence:
 *  - threadIdx/blockIdx/blockDim/gridDim are thread-local, set by the runner before each
 *    GPU thread runs (and before each fiber resumes);
 *  - __shared__ variables live in the OS thread's shared arena, which runs one block at
 *    a time: one copy per running block, shared by all of that block's threads, with
 *    inaccessible pages on either side (cubehip_shared.h);
 *  - warps: see cubehip_warp.h.
 */
#pragma once
#include "cubehip_base.h"

#ifdef CUBEHIP_CHECK
#include "cubehip_check.h"
#endif
#include "cubehip_entry.h"
#include "cubehip_shared.h"
#include "cubehip_regions.h"
#include "cubehip_warp.h"
#ifdef CUBEHIP_CHECK
#include "cubehip_check_shared.h"
#endif

extern "C" __attribute__((visibility("default"))) unsigned cubehip_abi_version(void) { return CUBEHIP_ABI_VERSION; }

#ifdef CUBEHIP_CHECK
/* A checked module's barriers say their line (cubehip_check.h's check_line). */
#define __syncthreads() (::cubehip::check_mark(__LINE__), ::__syncthreads())
#define __syncthreads_count(p) (::cubehip::check_mark(__LINE__), ::__syncthreads_count(p))
#define __syncthreads_and(p) (::cubehip::check_mark(__LINE__), ::__syncthreads_and(p))
#define __syncthreads_or(p) (::cubehip::check_mark(__LINE__), ::__syncthreads_or(p))
#endif
