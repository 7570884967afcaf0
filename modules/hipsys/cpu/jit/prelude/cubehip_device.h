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

/* ---- atomics -----------------------------------------------------------------------
 * Blocks run on several OS threads at once, so these are real atomic instructions
 * (relaxed, as GPU atomics are). Floating point goes through a compare-and-swap loop on
 * the bit pattern because the __atomic builtins take integers only. */
namespace cubehip {
template <class T> struct bits_of { using type = T; };
template <> struct bits_of<float> { using type = uint32_t; };
template <> struct bits_of<double> { using type = uint64_t; };

template <class T, class Op> inline T atomic_update(T* p, Op op) {
	using B = typename bits_of<T>::type;
	B* bp = reinterpret_cast<B*>(p);
	B old = __atomic_load_n(bp, __ATOMIC_RELAXED);
	for (;;) {
		T o;
		std::memcpy(&o, &old, sizeof o);
		T n = op(o);
		B nb;
		std::memcpy(&nb, &n, sizeof nb);
		if (__atomic_compare_exchange_n(bp, &old, nb, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return o;
	}
}
template <class T> using int_only = std::enable_if_t<std::is_integral<T>::value, T>;
template <class T> using arith = std::enable_if_t<std::is_arithmetic<T>::value, T>;
}

template <class T> inline cubehip::int_only<T> atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline float atomicAdd(float* p, float v) { return cubehip::atomic_update(p, [v](float o) { return o + v; }); }
inline double atomicAdd(double* p, double v) { return cubehip::atomic_update(p, [v](double o) { return o + v; }); }
template <class T> inline cubehip::int_only<T> atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
inline float atomicSub(float* p, float v) { return cubehip::atomic_update(p, [v](float o) { return o - v; }); }
inline double atomicSub(double* p, double v) { return cubehip::atomic_update(p, [v](double o) { return o - v; }); }
template <class T> inline cubehip::int_only<T> atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <class T> inline cubehip::int_only<T> atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <class T> inline cubehip::int_only<T> atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
template <class T> inline cubehip::arith<T> atomicMax(T* p, T v) {
	return cubehip::atomic_update(p, [v](T o) { return o < v ? v : o; });
}
template <class T> inline cubehip::arith<T> atomicMin(T* p, T v) {
	return cubehip::atomic_update(p, [v](T o) { return v < o ? v : o; });
}
template <class T> inline cubehip::arith<T> atomicExch(T* p, T v) {
	return cubehip::atomic_update(p, [v](T) { return v; });
}
template <class T> inline cubehip::arith<T> atomicCAS(T* p, T cmp, T v) {
	using B = typename cubehip::bits_of<T>::type;
	B c, n;
	std::memcpy(&c, &cmp, sizeof c);
	std::memcpy(&n, &v, sizeof n);
	__atomic_compare_exchange_n(reinterpret_cast<B*>(p), &c, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	T old;
	std::memcpy(&old, &c, sizeof old);
	return old;
}
inline unsigned int atomicInc(unsigned int* p, unsigned int lim) {
	return cubehip::atomic_update(p, [lim](unsigned int o) { return o >= lim ? 0u : o + 1; });
}
inline unsigned int atomicDec(unsigned int* p, unsigned int lim) {
	return cubehip::atomic_update(p, [lim](unsigned int o) { return (o == 0 || o > lim) ? lim : o - 1; });
}
#define atomicAdd_system atomicAdd
#define atomicCAS_system atomicCAS
#define atomicExch_system atomicExch
#define atomicMax_system atomicMax
#define atomicMin_system atomicMin

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

/* ---- math: <cmath> gives sqrtf, expf, powf, ...; these are HIP's additions. The fast
 * variants (__expf) are the precise ones here, which GPUs also allow. */
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float exp10f(float x) { return powf(10.0f, x); }
inline float sinpif(float x) { return sinf(float(M_PI) * x); }
inline float cospif(float x) { return cosf(float(M_PI) * x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }

/* ---- bit reinterpretation and integer intrinsics ---------------------------------- */
inline float __int_as_float(int x) { float r; std::memcpy(&r, &x, 4); return r; }
inline int __float_as_int(float x) { int r; std::memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned x) { float r; std::memcpy(&r, &x, 4); return r; }
inline unsigned __float_as_uint(float x) { unsigned r; std::memcpy(&r, &x, 4); return r; }
inline double __longlong_as_double(long long x) { double r; std::memcpy(&r, &x, 8); return r; }
inline long long __double_as_longlong(double x) { long long r; std::memcpy(&r, &x, 8); return r; }
inline int __float2int_rn(float x) { return int(nearbyintf(x)); }
inline int __float2int_rz(float x) { return int(x); }
inline int __float2int_rd(float x) { return int(floorf(x)); }
inline int __float2int_ru(float x) { return int(ceilf(x)); }
inline unsigned __float2uint_rn(float x) { return unsigned(nearbyintf(x)); }
inline float __int2float_rn(int x) { return float(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
	x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
	x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
	x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
	return __builtin_bswap32(x);
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
inline int __mulhi(int a, int b) { return int((long long)a * b >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((unsigned long long)a * b >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
	return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
template <class T> inline T __ldg(const T* p) { return *p; }
#if defined(__x86_64__)
inline long long clock64() { return (long long)__builtin_ia32_rdtsc(); }
#else
inline long long clock64() { long long v; asm volatile("mrs %0, cntvct_el0" : "=r"(v)); return v; }
#endif

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
