/* hip/hip_bf16.h for hiprtc before ROCm 6.1, which has no such header (it came with
 * ROCm 6.0's HIP): __hip_bfloat16 and __hip_bfloat162 as HIP defines them, the upper 16
 * bits of a float, converted with round-to-nearest-even and computed in float, rounding
 * once per operation (as AMD's own header does on chips without bfloat16 arithmetic). */
#pragma once
#include "cubehip_hiprtc.h"

namespace cubehip_bf16 {
__host__ __device__ inline unsigned short f2bf_bits(float f) {
	unsigned int u = __builtin_bit_cast(unsigned int, f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40); /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (unsigned short)(u >> 16);
}
__host__ __device__ inline float bf2f(unsigned short b) { return __builtin_bit_cast(float, (unsigned int)b << 16); }
} // namespace cubehip_bf16

struct __hip_bfloat16 {
	unsigned short data;
	__hip_bfloat16() = default;
	__host__ __device__ __hip_bfloat16(float f) : data(cubehip_bf16::f2bf_bits(f)) {}
	__host__ __device__ __hip_bfloat16(double d) : data(cubehip_bf16::f2bf_bits((float)d)) {}
	__host__ __device__ __hip_bfloat16(int v) : data(cubehip_bf16::f2bf_bits((float)v)) {}
	__host__ __device__ __hip_bfloat16(unsigned v) : data(cubehip_bf16::f2bf_bits((float)v)) {}
	__host__ __device__ operator float() const { return cubehip_bf16::bf2f(data); }
	__host__ __device__ __hip_bfloat16& operator+=(__hip_bfloat16 o) { return *this = __hip_bfloat16((float)*this + (float)o); }
	__host__ __device__ __hip_bfloat16& operator-=(__hip_bfloat16 o) { return *this = __hip_bfloat16((float)*this - (float)o); }
	__host__ __device__ __hip_bfloat16& operator*=(__hip_bfloat16 o) { return *this = __hip_bfloat16((float)*this * (float)o); }
	__host__ __device__ __hip_bfloat16& operator/=(__hip_bfloat16 o) { return *this = __hip_bfloat16((float)*this / (float)o); }
};
struct __attribute__((aligned(4))) __hip_bfloat162 {
	__hip_bfloat16 x, y;
	__hip_bfloat162() = default;
	__host__ __device__ __hip_bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) : x(a), y(b) {}
};

namespace cubehip_bf16 {
__host__ __device__ inline __hip_bfloat16 from_bits(unsigned short b) {
	__hip_bfloat16 r;
	r.data = b;
	return r;
}
__host__ __device__ inline bool isnan(__hip_bfloat16 a) { return (a.data & 0x7fff) > 0x7f80; }
} // namespace cubehip_bf16

#define CUBEHIP_BF_BIN(op) \
	__host__ __device__ inline __hip_bfloat16 operator op(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16((float)a op (float)b); }
CUBEHIP_BF_BIN(+) CUBEHIP_BF_BIN(-) CUBEHIP_BF_BIN(*) CUBEHIP_BF_BIN(/)
#undef CUBEHIP_BF_BIN
__host__ __device__ inline __hip_bfloat16 operator-(__hip_bfloat16 a) { return cubehip_bf16::from_bits(a.data ^ 0x8000); }
#define CUBEHIP_BF_CMP(op) \
	__host__ __device__ inline bool operator op(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a op (float)b; }
CUBEHIP_BF_CMP(==) CUBEHIP_BF_CMP(!=) CUBEHIP_BF_CMP(<) CUBEHIP_BF_CMP(<=) CUBEHIP_BF_CMP(>) CUBEHIP_BF_CMP(>=)
#undef CUBEHIP_BF_CMP
#define CUBEHIP_BF2_BIN(op) \
	__host__ __device__ inline __hip_bfloat162 operator op(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x op b.x, a.y op b.y); }
CUBEHIP_BF2_BIN(+) CUBEHIP_BF2_BIN(-) CUBEHIP_BF2_BIN(*) CUBEHIP_BF2_BIN(/)
#undef CUBEHIP_BF2_BIN
__host__ __device__ inline __hip_bfloat162 operator-(__hip_bfloat162 a) { return __hip_bfloat162(-a.x, -a.y); }

/* Conversions. */
__host__ __device__ inline __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
__host__ __device__ inline __hip_bfloat16 __float2bfloat16_rn(float f) { return __hip_bfloat16(f); }
__host__ __device__ inline __hip_bfloat16 __double2bfloat16(double d) { return __hip_bfloat16((float)d); }
__host__ __device__ inline float __bfloat162float(__hip_bfloat16 b) { return (float)b; }
__host__ __device__ inline unsigned short __bfloat16_as_ushort(__hip_bfloat16 b) { return b.data; }
__host__ __device__ inline short __bfloat16_as_short(__hip_bfloat16 b) { return (short)b.data; }
__host__ __device__ inline __hip_bfloat16 __ushort_as_bfloat16(unsigned short v) { return cubehip_bf16::from_bits(v); }
__host__ __device__ inline __hip_bfloat16 __short_as_bfloat16(short v) { return cubehip_bf16::from_bits((unsigned short)v); }
__host__ __device__ inline __hip_bfloat162 __bfloat162bfloat162(__hip_bfloat16 b) { return __hip_bfloat162(b, b); }
__host__ __device__ inline __hip_bfloat162 __halves2bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat162(a, b); }
__host__ __device__ inline __hip_bfloat162 __floats2bfloat162_rn(float a, float b) { return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(b)); }
__host__ __device__ inline __hip_bfloat162 __float2bfloat162_rn(float a) { return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(a)); }
__host__ __device__ inline __hip_bfloat162 __float22bfloat162_rn(float2 f) { return __hip_bfloat162(__hip_bfloat16(f.x), __hip_bfloat16(f.y)); }
__host__ __device__ inline float2 __bfloat1622float2(__hip_bfloat162 b) { return float2((float)b.x, (float)b.y); }
__host__ __device__ inline __hip_bfloat16 __low2bfloat16(__hip_bfloat162 b) { return b.x; }
__host__ __device__ inline __hip_bfloat16 __high2bfloat16(__hip_bfloat162 b) { return b.y; }
__host__ __device__ inline float __low2float(__hip_bfloat162 b) { return (float)b.x; }
__host__ __device__ inline float __high2float(__hip_bfloat162 b) { return (float)b.y; }
__host__ __device__ inline __hip_bfloat162 __lows2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x, b.x); }
__host__ __device__ inline __hip_bfloat162 __highs2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.y, b.y); }
__host__ __device__ inline __hip_bfloat162 __low2bfloat162(__hip_bfloat162 a) { return __hip_bfloat162(a.x, a.x); }
__host__ __device__ inline __hip_bfloat162 __high2bfloat162(__hip_bfloat162 a) { return __hip_bfloat162(a.y, a.y); }

/* Arithmetic. */
__host__ __device__ inline __hip_bfloat16 __hadd(__hip_bfloat16 a, __hip_bfloat16 b) { return a + b; }
__host__ __device__ inline __hip_bfloat16 __hsub(__hip_bfloat16 a, __hip_bfloat16 b) { return a - b; }
__host__ __device__ inline __hip_bfloat16 __hmul(__hip_bfloat16 a, __hip_bfloat16 b) { return a * b; }
__host__ __device__ inline __hip_bfloat16 __hdiv(__hip_bfloat16 a, __hip_bfloat16 b) { return a / b; }
__device__ inline __hip_bfloat16 __hfma(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c) { return __hip_bfloat16(__builtin_fmaf((float)a, (float)b, (float)c)); }
__host__ __device__ inline __hip_bfloat16 __hneg(__hip_bfloat16 a) { return -a; }
__host__ __device__ inline __hip_bfloat16 __habs(__hip_bfloat16 a) { return cubehip_bf16::from_bits(a.data & 0x7fff); }
__device__ inline __hip_bfloat16 __hmax(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(__builtin_fmaxf((float)a, (float)b)); }
__device__ inline __hip_bfloat16 __hmin(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(__builtin_fminf((float)a, (float)b)); }
__host__ __device__ inline __hip_bfloat162 __hadd2(__hip_bfloat162 a, __hip_bfloat162 b) { return a + b; }
__host__ __device__ inline __hip_bfloat162 __hsub2(__hip_bfloat162 a, __hip_bfloat162 b) { return a - b; }
__host__ __device__ inline __hip_bfloat162 __hmul2(__hip_bfloat162 a, __hip_bfloat162 b) { return a * b; }
__host__ __device__ inline __hip_bfloat162 __h2div(__hip_bfloat162 a, __hip_bfloat162 b) { return a / b; }
__device__ inline __hip_bfloat162 __hfma2(__hip_bfloat162 a, __hip_bfloat162 b, __hip_bfloat162 c) { return __hip_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
__host__ __device__ inline __hip_bfloat162 __hneg2(__hip_bfloat162 a) { return -a; }
__host__ __device__ inline __hip_bfloat162 __habs2(__hip_bfloat162 a) { return __hip_bfloat162(__habs(a.x), __habs(a.y)); }
__device__ inline __hip_bfloat162 __hmax2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
__device__ inline __hip_bfloat162 __hmin2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmin(a.x, b.x), __hmin(a.y, b.y)); }

/* Comparisons: the ordered ones are false when either side is NaN, the u-suffixed
 * (unordered) ones true; the h2 forms compare lane by lane into 1.0 or 0.0, the hb2 forms
 * are true when both lanes are. */
__host__ __device__ inline bool __hisnan(__hip_bfloat16 a) { return cubehip_bf16::isnan(a); }
__host__ __device__ inline bool __hisinf(__hip_bfloat16 a) { return (a.data & 0x7fff) == 0x7f80; }
#define CUBEHIP_BF_CMPS(name, op)                                                                                                                     \
	__host__ __device__ inline bool __h##name(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a op (float)b; }                               \
	__host__ __device__ inline bool __h##name##u(__hip_bfloat16 a, __hip_bfloat16 b) { return __hisnan(a) || __hisnan(b) || (float)a op (float)b; } \
	__host__ __device__ inline __hip_bfloat162 __h##name##2(__hip_bfloat162 a, __hip_bfloat162 b) {                                               \
		return __hip_bfloat162(__h##name(a.x, b.x) ? 1.0f : 0.0f, __h##name(a.y, b.y) ? 1.0f : 0.0f);                                          \
	}                                                                                                                                            \
	__host__ __device__ inline __hip_bfloat162 __h##name##u2(__hip_bfloat162 a, __hip_bfloat162 b) {                                              \
		return __hip_bfloat162(__h##name##u(a.x, b.x) ? 1.0f : 0.0f, __h##name##u(a.y, b.y) ? 1.0f : 0.0f);                                    \
	}                                                                                                                                            \
	__host__ __device__ inline bool __hb##name##2(__hip_bfloat162 a, __hip_bfloat162 b) { return __h##name(a.x, b.x) && __h##name(a.y, b.y); }    \
	__host__ __device__ inline bool __hb##name##u2(__hip_bfloat162 a, __hip_bfloat162 b) { return __h##name##u(a.x, b.x) && __h##name##u(a.y, b.y); }
CUBEHIP_BF_CMPS(eq, ==) CUBEHIP_BF_CMPS(lt, <) CUBEHIP_BF_CMPS(le, <=) CUBEHIP_BF_CMPS(gt, >) CUBEHIP_BF_CMPS(ge, >=)
#undef CUBEHIP_BF_CMPS
/* Not-equal is ordered too: NaN on either side makes __hne false (a != b alone is true). */
__host__ __device__ inline bool __hne(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a < (float)b || (float)a > (float)b; }
__host__ __device__ inline bool __hneu(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a != (float)b; }
__host__ __device__ inline __hip_bfloat162 __hne2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hne(a.x, b.x) ? 1.0f : 0.0f, __hne(a.y, b.y) ? 1.0f : 0.0f); }
__host__ __device__ inline __hip_bfloat162 __hneu2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hneu(a.x, b.x) ? 1.0f : 0.0f, __hneu(a.y, b.y) ? 1.0f : 0.0f); }
__host__ __device__ inline bool __hbne2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }
__host__ __device__ inline bool __hbneu2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hneu(a.x, b.x) && __hneu(a.y, b.y); }
__host__ __device__ inline __hip_bfloat162 __hisnan2(__hip_bfloat162 a) { return __hip_bfloat162(__hisnan(a.x) ? 1.0f : 0.0f, __hisnan(a.y) ? 1.0f : 0.0f); }

/* Math, through float. */
#define CUBEHIP_BF_MATH(name, f)                                                                              \
	__device__ inline __hip_bfloat16 name(__hip_bfloat16 h) { return __hip_bfloat16(f((float)h)); }           \
	__device__ inline __hip_bfloat162 name##2(__hip_bfloat162 h) { return __hip_bfloat162(name(h.x), name(h.y)); }
CUBEHIP_BF_MATH(hsqrt, sqrtf) CUBEHIP_BF_MATH(hrsqrt, rsqrtf) CUBEHIP_BF_MATH(hexp, expf) CUBEHIP_BF_MATH(hexp2, exp2f)
CUBEHIP_BF_MATH(hexp10, exp10f) CUBEHIP_BF_MATH(hlog, logf) CUBEHIP_BF_MATH(hlog2, log2f) CUBEHIP_BF_MATH(hlog10, log10f)
CUBEHIP_BF_MATH(hsin, sinf) CUBEHIP_BF_MATH(hcos, cosf) CUBEHIP_BF_MATH(hceil, ceilf) CUBEHIP_BF_MATH(hfloor, floorf)
CUBEHIP_BF_MATH(htrunc, truncf) CUBEHIP_BF_MATH(hrint, rintf)
#undef CUBEHIP_BF_MATH
__device__ inline __hip_bfloat16 hrcp(__hip_bfloat16 h) { return __hip_bfloat16(1.0f / (float)h); }
__device__ inline __hip_bfloat162 h2rcp(__hip_bfloat162 h) { return __hip_bfloat162(hrcp(h.x), hrcp(h.y)); }

/* Atomic add: a compare-and-swap loop on the 32-bit word that holds the value (the chip
 * has no 16-bit atomics); a pair is one such word, updated as a whole. */
__device__ inline __hip_bfloat16 atomicAdd(__hip_bfloat16* p, __hip_bfloat16 v) {
	const unsigned long long a = (unsigned long long)p;
	unsigned int* word = (unsigned int*)(a & ~3ull);
	const unsigned shift = (unsigned)(a & 2) * 8;
	unsigned int old = *word, assumed;
	do {
		assumed = old;
		const __hip_bfloat16 o = cubehip_bf16::from_bits((unsigned short)(assumed >> shift));
		const unsigned int n = (assumed & ~(0xffffu << shift)) | ((unsigned int)(o + v).data << shift);
		old = atomicCAS(word, assumed, n);
	} while (old != assumed);
	return cubehip_bf16::from_bits((unsigned short)(old >> shift));
}
__device__ inline __hip_bfloat162 atomicAdd(__hip_bfloat162* p, __hip_bfloat162 v) {
	unsigned int* word = (unsigned int*)p;
	unsigned int old = *word, assumed;
	do {
		assumed = old;
		const __hip_bfloat162 o = __builtin_bit_cast(__hip_bfloat162, assumed);
		old = atomicCAS(word, assumed, __builtin_bit_cast(unsigned int, o + v));
	} while (old != assumed);
	return __builtin_bit_cast(__hip_bfloat162, old);
}
