/* cubehip_complex.h: HIP's complex numbers (<hip/hip_complex.h>): hipFloatComplex and
 * hipDoubleComplex are float2 and double2, with HIP's functions on them. */
#pragma once

typedef float2 hipFloatComplex;
typedef double2 hipDoubleComplex;
typedef hipFloatComplex hipComplex;

#define CUBEHIP_COMPLEX(T, V, S)                                                                              \
	inline T hipCreal##S(V z) { return z.x; }                                                                  \
	inline T hipCimag##S(V z) { return z.y; }                                                                  \
	inline V hipConj##S(V z) { return V{z.x, -z.y}; }                                                          \
	inline V hipCadd##S(V a, V b) { return V{a.x + b.x, a.y + b.y}; }                                          \
	inline V hipCsub##S(V a, V b) { return V{a.x - b.x, a.y - b.y}; }                                          \
	inline V hipCmul##S(V a, V b) { return V{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }                  \
	inline V hipCdiv##S(V a, V b) {                                                                            \
		const T d = b.x * b.x + b.y * b.y;                                                                     \
		return V{(a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d};                                    \
	}                                                                                                          \
	inline T hipCabs##S(V z) { return hypot(z.x, z.y); }                                                       \
	inline T hipCsqabs##S(V z) { return z.x * z.x + z.y * z.y; }                                               \
	inline V hipCfma##S(V p, V q, V r) { return hipCadd##S(hipCmul##S(p, q), r); }
CUBEHIP_COMPLEX(float, hipFloatComplex, f)
CUBEHIP_COMPLEX(double, hipDoubleComplex, )
#undef CUBEHIP_COMPLEX
inline hipFloatComplex make_hipFloatComplex(float re, float im) { return hipFloatComplex{re, im}; }
inline hipDoubleComplex make_hipDoubleComplex(double re, double im) { return hipDoubleComplex{re, im}; }
inline hipComplex make_hipComplex(float re, float im) { return hipComplex{re, im}; }
inline hipDoubleComplex hipComplexFloatToDouble(hipFloatComplex z) { return hipDoubleComplex{z.x, z.y}; }
inline hipFloatComplex hipComplexDoubleToFloat(hipDoubleComplex z) { return hipFloatComplex{float(z.x), float(z.y)}; }
