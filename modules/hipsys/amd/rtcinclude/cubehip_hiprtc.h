/* cubehip_hiprtc.h: what cubehip adds to every hiprtc program on the amd platform, so that
 * one kernel source compiles on every platform: HIP's macros that hiprtc's own headers
 * leave out (they live in parts of hip_runtime.h that hiprtc skips), NULL, and the _sync
 * warp functions ROCm releases before 6.2 lack. Everything is defined only where hiprtc
 * did not define it already. */
#pragma once
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#ifndef NULL
#define NULL __null
#endif
#ifndef hipThreadIdx_x
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)
#endif
#ifndef HIP_DYNAMIC_SHARED
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#endif
#ifndef HIP_KERNEL_NAME
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#endif

#if CUBEHIP_HIPRTC_WARP_SYNC
/* A wavefront runs in lock step, so the mask of the _sync forms has nothing to wait for:
 * each is its unsynchronized form (as ROCm 6.2's own are, after checking the mask). */
template <class M, class T> __device__ inline T __shfl_sync(M, T v, int src, int width = warpSize) { return __shfl(v, src, width); }
template <class M, class T> __device__ inline T __shfl_up_sync(M, T v, unsigned int d, int width = warpSize) { return __shfl_up(v, d, width); }
template <class M, class T> __device__ inline T __shfl_down_sync(M, T v, unsigned int d, int width = warpSize) { return __shfl_down(v, d, width); }
template <class M, class T> __device__ inline T __shfl_xor_sync(M, T v, int m, int width = warpSize) { return __shfl_xor(v, m, width); }
template <class M> __device__ inline unsigned long long __ballot_sync(M, int p) { return __ballot(p); }
template <class M> __device__ inline int __any_sync(M, int p) { return __any(p); }
template <class M> __device__ inline int __all_sync(M, int p) { return __all(p); }
__device__ inline unsigned long long __activemask() { return __ballot(1); }
__device__ inline void __syncwarp() { __builtin_amdgcn_wave_barrier(); }
template <class M> __device__ inline void __syncwarp(M) { __builtin_amdgcn_wave_barrier(); }
/* Warp reductions by a butterfly of shuffles over the whole wavefront. */
#define CUBEHIP_WARP_REDUCE(name, T, op)                                           \
	template <class M> __device__ inline T name(M, T v) {                           \
		for (int o = warpSize / 2; o > 0; o /= 2) { T u = __shfl_xor(v, o); v = op; } \
		return v;                                                                    \
	}
CUBEHIP_WARP_REDUCE(__reduce_add_sync, unsigned, v + u)
CUBEHIP_WARP_REDUCE(__reduce_add_sync, int, v + u)
CUBEHIP_WARP_REDUCE(__reduce_min_sync, unsigned, u < v ? u : v)
CUBEHIP_WARP_REDUCE(__reduce_min_sync, int, u < v ? u : v)
CUBEHIP_WARP_REDUCE(__reduce_max_sync, unsigned, u > v ? u : v)
CUBEHIP_WARP_REDUCE(__reduce_max_sync, int, u > v ? u : v)
CUBEHIP_WARP_REDUCE(__reduce_and_sync, unsigned, v & u)
CUBEHIP_WARP_REDUCE(__reduce_or_sync, unsigned, v | u)
CUBEHIP_WARP_REDUCE(__reduce_xor_sync, unsigned, v ^ u)
#undef CUBEHIP_WARP_REDUCE
#endif
