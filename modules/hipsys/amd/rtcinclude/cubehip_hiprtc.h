/* cubehip_hiprtc.h: what cubehip adds to every hiprtc program on the amd platform, so that
 * one kernel source compiles on every platform: HIP's macros that hiprtc's own headers
 * leave out (they live in parts of hip_runtime.h that hiprtc skips), NULL, __grid_constant__,
 * and the _sync warp functions ROCm releases before 6.2 lack. Everything is defined only where hiprtc
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
/* A kernel parameter read-only for the whole grid (CUDA 11.7's qualifier, which ROCm 5
 * lacks): an AMD kernel's arguments are read-only already. */
#ifndef __grid_constant__
#define __grid_constant__
#endif
#ifndef HIP_KERNEL_NAME
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#endif

#if CUBEHIP_HIPRTC_WARP_SYNC
/* A wavefront runs in lock step, so the mask of the _sync forms has nothing to wait for:
 * each is its unsynchronized form (as ROCm 6.2's own are, after checking the mask). The
 * types the unsynchronized forms take go to them as they are; any other value of at most
 * 8 bytes (__half, __half2, bfloat16, a small struct), which they have no overload for,
 * goes through an integer holding its bits. */
template <class T> struct cubehip_shfl_native { static const bool value = false; };
#define CUBEHIP_SHFL_NATIVE(T) \
	template <> struct cubehip_shfl_native<T> { static const bool value = true; };
CUBEHIP_SHFL_NATIVE(int) CUBEHIP_SHFL_NATIVE(unsigned int) CUBEHIP_SHFL_NATIVE(float) CUBEHIP_SHFL_NATIVE(double)
CUBEHIP_SHFL_NATIVE(long) CUBEHIP_SHFL_NATIVE(unsigned long) CUBEHIP_SHFL_NATIVE(long long) CUBEHIP_SHFL_NATIVE(unsigned long long)
#undef CUBEHIP_SHFL_NATIVE
template <class T, bool = cubehip_shfl_native<T>::value> struct cubehip_shfl {
	__device__ static T idx(T v, int s, int w) { return __shfl(v, s, w); }
	__device__ static T up(T v, unsigned int d, int w) { return __shfl_up(v, d, w); }
	__device__ static T down(T v, unsigned int d, int w) { return __shfl_down(v, d, w); }
	__device__ static T xor_(T v, int m, int w) { return __shfl_xor(v, m, w); }
};
template <class T> struct cubehip_shfl<T, false> {
	static_assert(sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
	template <class U> __device__ static U bits(const T& v) {
		U u = 0;
		__builtin_memcpy(&u, &v, sizeof(T) < sizeof(U) ? sizeof(T) : sizeof(U));
		return u;
	}
	__device__ static T value(long long u) {
		T r;
		__builtin_memcpy(&r, &u, sizeof(T));
		return r;
	}
	/* Shuffles the bits of v with f, as an int up to 4 bytes and a long long above. */
	template <class F> __device__ static T via(const T& v, F f) {
		if (sizeof(T) <= 4) return value(f(bits<int>(v)));
		return value(f(bits<long long>(v)));
	}
	__device__ static T idx(T v, int s, int w) { return via(v, [=](auto u) { return __shfl(u, s, w); }); }
	__device__ static T up(T v, unsigned int d, int w) { return via(v, [=](auto u) { return __shfl_up(u, d, w); }); }
	__device__ static T down(T v, unsigned int d, int w) { return via(v, [=](auto u) { return __shfl_down(u, d, w); }); }
	__device__ static T xor_(T v, int m, int w) { return via(v, [=](auto u) { return __shfl_xor(u, m, w); }); }
};
template <class M, class T> __device__ inline T __shfl_sync(M, T v, int src, int width = warpSize) { return cubehip_shfl<T>::idx(v, src, width); }
template <class M, class T> __device__ inline T __shfl_up_sync(M, T v, unsigned int d, int width = warpSize) { return cubehip_shfl<T>::up(v, d, width); }
template <class M, class T> __device__ inline T __shfl_down_sync(M, T v, unsigned int d, int width = warpSize) { return cubehip_shfl<T>::down(v, d, width); }
template <class M, class T> __device__ inline T __shfl_xor_sync(M, T v, int m, int width = warpSize) { return cubehip_shfl<T>::xor_(v, m, width); }
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
/* __match_any_sync and __match_all_sync compare values bit for bit, as CUDA does (a NaN
 * matches the lanes holding the same NaN). cubehip_match_bits gives each type HIP
 * accepts there as the integer of its bits. */
#define CUBEHIP_MATCH_BITS(T, U, expr) \
	__device__ inline U cubehip_match_bits(T v) { return expr; }
CUBEHIP_MATCH_BITS(int, unsigned, (unsigned)v)
CUBEHIP_MATCH_BITS(unsigned, unsigned, v)
CUBEHIP_MATCH_BITS(long, unsigned long long, (unsigned long long)v)
CUBEHIP_MATCH_BITS(unsigned long, unsigned long long, (unsigned long long)v)
CUBEHIP_MATCH_BITS(long long, unsigned long long, (unsigned long long)v)
CUBEHIP_MATCH_BITS(unsigned long long, unsigned long long, v)
CUBEHIP_MATCH_BITS(float, unsigned, __float_as_uint(v))
CUBEHIP_MATCH_BITS(double, unsigned long long, (unsigned long long)__double_as_longlong(v))
#undef CUBEHIP_MATCH_BITS
/* The lanes of the wavefront holding the same value as this one. The active lanes are
 * split into groups one value at a time: each round takes the value of the lowest lane
 * not yet grouped, and the lanes holding it get their ballot as the answer. The rounds
 * are as many as the distinct values, and every lane takes part in each, so the
 * shuffles and ballots see the same lanes throughout. */
template <class M, class T> __device__ inline unsigned long long __match_any_sync(M, T v) {
	const auto bits = cubehip_match_bits(v);
	unsigned long long left = __ballot(1), mine = 0;
	while (left) {
		const auto lead = __shfl(bits, __ffsll((unsigned long long)left) - 1);
		const unsigned long long same = __ballot(bits == lead);
		if (bits == lead) mine = same;
		left &= ~same;
	}
	return mine;
}
/* The active lanes if they all hold this lane's value (*pred set), else 0 (*pred clear). */
template <class M, class T> __device__ inline unsigned long long __match_all_sync(M, T v, int* pred) {
	const auto bits = cubehip_match_bits(v);
	const unsigned long long active = __ballot(1);
	const auto first = __shfl(bits, __ffsll((unsigned long long)active) - 1);
	*pred = __ballot(bits == first) == active;
	return *pred ? active : 0;
}
#endif
