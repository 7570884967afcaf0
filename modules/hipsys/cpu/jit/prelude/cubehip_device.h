/* cubehip_device.h: HIP's device functions on the host: barriers and fences, atomics,
 * math and integer intrinsics. (Warp functions: cubehip_warp.h.) */
#pragma once

/* ---- barriers and fences ---------------------------------------------------------- */

namespace cubehip {
struct fibers; /* cubehip_entry.h */

CUBEHIP_HIDDEN void barrier();
/* A barrier that also counts the threads reaching it with pred set: the count (op 0),
 * whether all of them had it (1) or any (2). */
CUBEHIP_HIDDEN int barrier_vote(int pred, int op);
}

/* Yields this thread's fiber to the block's scheduler, which resumes it once every other
 * thread of the block has reached a barrier or finished. In a module the jit runs as a
 * plain loop (its source never names __syncthreads) there is no scheduler and this is a
 * no-op; that only happens when the call is hidden in a header outside the program. */
inline void __syncthreads() { cubehip::barrier(); }
/* __syncthreads that also evaluates pred for every thread of the block: how many had it
 * non-zero, whether all did, whether any did. Threads that have returned take no part. */
inline int __syncthreads_count(int pred) { return cubehip::barrier_vote(pred, 0); }
inline int __syncthreads_and(int pred) { return cubehip::barrier_vote(pred, 1); }
inline int __syncthreads_or(int pred) { return cubehip::barrier_vote(pred, 2); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* Ends the launch as a GPU's trap does: the runner catches the illegal instruction on
 * the kernel's thread (fault.c) and fails the launch with hipErrorLaunchFailure. abort()
 * and a failed assert() end it the same way, through SIGABRT. */
[[noreturn]] inline void __trap() { __builtin_trap(); }

#include "cubehip_atomic.h"

/* Clang's non-temporal load and store (HIP code streams with them), which GCC does not
 * have: a hint that the data will not be reused soon, here a plain access. The stored
 * value converts to the pointee's type, as clang's builtin converts it. */
#ifndef __clang__
template <class T> inline T __builtin_nontemporal_load(const T* p) { return *p; }
template <class T> inline T __builtin_nontemporal_load(const volatile T* p) { return *p; }
template <class T, class U> inline void __builtin_nontemporal_store(U v, T* p) { *p = T(v); }
#endif

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

