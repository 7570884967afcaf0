/* hip/hip_complex.h for hiprtc before ROCm 6.1: the installed header would define again
 * the vector types hiprtc's preamble already holds (its include guards gone), so this one
 * gives HIP's complex API on the preamble's float2 and double2, as HIP declares it:
 * hipFloatComplex (hipComplex) and hipDoubleComplex, make_*, the parts, conjugate, the four
 * operations, absolute value and its square, fused multiply-add and the conversions. */
#pragma once
#include "cubehip_hiprtc.h"

typedef float2 hipFloatComplex;
typedef double2 hipDoubleComplex;
typedef hipFloatComplex hipComplex;

__host__ __device__ inline hipFloatComplex make_hipFloatComplex(float re, float im) { return make_float2(re, im); }
__host__ __device__ inline hipDoubleComplex make_hipDoubleComplex(double re, double im) { return make_double2(re, im); }
__host__ __device__ inline hipComplex make_hipComplex(float re, float im) { return make_float2(re, im); }

#define CUBEHIP_RTC_COMPLEX(T, V, S, MAKE, HYPOT)                                                              \
	__host__ __device__ inline T hipCreal##S(V z) { return z.x; }                                              \
	__host__ __device__ inline T hipCimag##S(V z) { return z.y; }                                              \
	__host__ __device__ inline V hipConj##S(V z) { return MAKE(z.x, -z.y); }                                   \
	__host__ __device__ inline T hipCsqabs##S(V z) { return z.x * z.x + z.y * z.y; }                           \
	__host__ __device__ inline V hipCadd##S(V a, V b) { return MAKE(a.x + b.x, a.y + b.y); }                   \
	__host__ __device__ inline V hipCsub##S(V a, V b) { return MAKE(a.x - b.x, a.y - b.y); }                   \
	__host__ __device__ inline V hipCmul##S(V a, V b) { return MAKE(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); } \
	__host__ __device__ inline V hipCdiv##S(V a, V b) {                                                        \
		const T d = hipCsqabs##S(b);                                                                           \
		return MAKE((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);                                 \
	}                                                                                                          \
	__host__ __device__ inline T hipCabs##S(V z) { return HYPOT(z.x, z.y); }                                   \
	__host__ __device__ inline V hipCfma##S(V p, V q, V r) { return hipCadd##S(hipCmul##S(p, q), r); }
CUBEHIP_RTC_COMPLEX(float, hipFloatComplex, f, make_hipFloatComplex, hypotf)
CUBEHIP_RTC_COMPLEX(double, hipDoubleComplex, , make_hipDoubleComplex, hypot)
#undef CUBEHIP_RTC_COMPLEX

__host__ __device__ inline hipDoubleComplex hipComplexFloatToDouble(hipFloatComplex z) { return make_double2(z.x, z.y); }
__host__ __device__ inline hipFloatComplex hipComplexDoubleToFloat(hipDoubleComplex z) {
	return make_float2((float)z.x, (float)z.y);
}
