/* cubehip_device.h: HIP's device functions on the host: barriers and fences, atomics,
 * math, integer intrinsics and the (one-lane) warp functions. */
#pragma once

/* ---- barriers and fences ---------------------------------------------------------- */

namespace cubehip {
struct fibers; /* cubehip_entry.h */

CUBEHIP_HIDDEN void barrier();
}

/* Yields this thread's fiber to the block's scheduler, which resumes it once every other
 * thread of the block has reached a barrier or finished. In a module the jit runs as a
 * plain loop (its source never names __syncthreads) there is no scheduler and this is a
 * no-op; that only happens when the call is hidden in a header outside the program. */
inline void __syncthreads() { cubehip::barrier(); }
inline void __syncwarp(unsigned long long = 0) {}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

#include "cubehip_atomic.h"

/* ---- min/max: CUDA and HIP give the global namespace overloads for every pair of
 * arithmetic types, with the usual conversions. */
template <class A, class B, class = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
inline std::common_type_t<A, B> min(A a, B b) {
	using C = std::common_type_t<A, B>;
	return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
inline std::common_type_t<A, B> max(A a, B b) {
	using C = std::common_type_t<A, B>;
	return C(a) < C(b) ? C(b) : C(a);
}

#include "cubehip_math.h"

/* ---- warp functions: warpSize is 1, so every lane is the caller. ------------------- */
template <class T> inline T __shfl(T v, int, int = warpSize) { return v; }
template <class T> inline T __shfl_up(T v, unsigned, int = warpSize) { return v; }
template <class T> inline T __shfl_down(T v, unsigned, int = warpSize) { return v; }
template <class T> inline T __shfl_xor(T v, int, int = warpSize) { return v; }
template <class T> inline T __shfl_sync(unsigned long long, T v, int, int = warpSize) { return v; }
template <class T> inline T __shfl_up_sync(unsigned long long, T v, unsigned, int = warpSize) { return v; }
template <class T> inline T __shfl_down_sync(unsigned long long, T v, unsigned, int = warpSize) { return v; }
template <class T> inline T __shfl_xor_sync(unsigned long long, T v, int, int = warpSize) { return v; }
inline unsigned long long __ballot(int p) { return p ? 1ull : 0ull; }
inline unsigned long long __ballot_sync(unsigned long long, int p) { return p ? 1ull : 0ull; }
inline int __any(int p) { return p != 0; }
inline int __all(int p) { return p != 0; }
inline int __any_sync(unsigned long long, int p) { return p != 0; }
inline int __all_sync(unsigned long long, int p) { return p != 0; }
inline unsigned long long __activemask() { return 1ull; }
inline unsigned __lane_id() { return 0; }
