/* cubehip_fp16.h: HIP's half precision (<hip/hip_fp16.h>) on the host: __half and __half2
 * (half, half2), their conversions, arithmetic and math. Values are IEEE binary16 stored
 * in 16 bits; conversions go through the compiler's _Float16 (F16C instructions on x86),
 * arithmetic through float and back, rounding once per operation as a GPU's half unit does.
 * Both types have trivial default constructors so they can live in __shared__ arrays. */
#pragma once

struct __half_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };

namespace cubehip {
inline unsigned short f2h_bits(float f) { _Float16 h = (_Float16)f; unsigned short r; std::memcpy(&r, &h, 2); return r; }
inline float h2f(unsigned short b) { _Float16 h; std::memcpy(&h, &b, 2); return (float)h; }
/* float to half rounding in a direction (-1 down, 0 toward zero, 1 up): the nearest half,
 * stepped one unit of its last place when it lies on the wrong side of f. */
inline unsigned short f2h_dir(float f, int dir) {
	unsigned short b = f2h_bits(f);
	float h = h2f(b);
	if (f != f || h == f) return b;
	const bool up = dir > 0 || (dir == 0 && f < 0);
	if (up ? h > f : h < f) return b;
	/* Step toward the wanted side: the magnitude grows for +up/-down, shrinks otherwise. */
	const bool neg = b & 0x8000;
	if ((b & 0x7fff) == 0) return up ? 0x0001 : 0x8001;
	return (up != neg) ? (unsigned short)(b + 1) : (unsigned short)(b - 1);
}
} // namespace cubehip

struct __half {
	unsigned short __x;
	__half() = default;
	__half(const __half_raw& r) : __x(r.x) {}
	__half(float f) : __x(cubehip::f2h_bits(f)) {}
	__half(double d) : __x(cubehip::f2h_bits(float(d))) {}
	__half(int v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(unsigned v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(short v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(unsigned short v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(long v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(unsigned long v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(long long v) : __x(cubehip::f2h_bits(float(v))) {}
	__half(unsigned long long v) : __x(cubehip::f2h_bits(float(v))) {}
	operator float() const { return cubehip::h2f(__x); }
	operator __half_raw() const { return __half_raw{__x}; }
	__half& operator=(const __half_raw& r) { __x = r.x; return *this; }
	__half& operator+=(__half o) { return *this = __half(float(*this) + float(o)); }
	__half& operator-=(__half o) { return *this = __half(float(*this) - float(o)); }
	__half& operator*=(__half o) { return *this = __half(float(*this) * float(o)); }
	__half& operator/=(__half o) { return *this = __half(float(*this) / float(o)); }
	__half& operator++() { return *this += __half(1.0f); }
	__half& operator--() { return *this -= __half(1.0f); }
	__half operator++(int) { __half o = *this; ++*this; return o; }
	__half operator--(int) { __half o = *this; --*this; return o; }
};
struct __half2 {
	__half x, y;
	__half2() = default;
	__half2(__half a, __half b) : x(a), y(b) {}
	__half2(const __half2_raw& r) { x.__x = r.x; y.__x = r.y; }
	operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
	__half2& operator+=(__half2 o) { x += o.x; y += o.y; return *this; }
	__half2& operator-=(__half2 o) { x -= o.x; y -= o.y; return *this; }
	__half2& operator*=(__half2 o) { x *= o.x; y *= o.y; return *this; }
	__half2& operator/=(__half2 o) { x /= o.x; y /= o.y; return *this; }
};
typedef __half half;
typedef __half2 half2;

/* Two halves give a half; a half with another arithmetic type gives that type's
 * arithmetic (exact matches, so neither is ambiguous with the float conversion). */
inline __half operator+(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half operator-(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half operator*(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half operator/(__half a, __half b) { return __half(float(a) / float(b)); }
inline __half operator-(__half a) { __half r = a; r.__x ^= 0x8000; return r; }
inline __half operator+(__half a) { return a; }
inline bool operator==(__half a, __half b) { return float(a) == float(b); }
inline bool operator!=(__half a, __half b) { return float(a) != float(b); }
inline bool operator<(__half a, __half b) { return float(a) < float(b); }
inline bool operator<=(__half a, __half b) { return float(a) <= float(b); }
inline bool operator>(__half a, __half b) { return float(a) > float(b); }
inline bool operator>=(__half a, __half b) { return float(a) >= float(b); }
#define CUBEHIP_HALF_MIXED(op)                                                                                                       \
	template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value>> inline auto operator op(__half a, T b) { return float(a) op b; } \
	template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value>> inline auto operator op(T a, __half b) { return a op float(b); }
CUBEHIP_HALF_MIXED(+) CUBEHIP_HALF_MIXED(-) CUBEHIP_HALF_MIXED(*) CUBEHIP_HALF_MIXED(/)
CUBEHIP_HALF_MIXED(==) CUBEHIP_HALF_MIXED(!=) CUBEHIP_HALF_MIXED(<) CUBEHIP_HALF_MIXED(<=) CUBEHIP_HALF_MIXED(>) CUBEHIP_HALF_MIXED(>=)
#undef CUBEHIP_HALF_MIXED
inline __half2 operator+(__half2 a, __half2 b) { return __half2(a.x + b.x, a.y + b.y); }
inline __half2 operator-(__half2 a, __half2 b) { return __half2(a.x - b.x, a.y - b.y); }
inline __half2 operator*(__half2 a, __half2 b) { return __half2(a.x * b.x, a.y * b.y); }
inline __half2 operator/(__half2 a, __half2 b) { return __half2(a.x / b.x, a.y / b.y); }
inline __half2 operator-(__half2 a) { return __half2(-a.x, -a.y); }
inline bool operator==(__half2 a, __half2 b) { return a.x == b.x && a.y == b.y; }
inline bool operator!=(__half2 a, __half2 b) { return !(a == b); }

/* ---- conversions ---------------------------------------------------------------- */
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half_rz(float f) { return __half_raw{cubehip::f2h_dir(f, 0)}; }
inline __half __float2half_rd(float f) { return __half_raw{cubehip::f2h_dir(f, -1)}; }
inline __half __float2half_ru(float f) { return __half_raw{cubehip::f2h_dir(f, 1)}; }
inline __half __double2half(double d) { return __half(float(d)); }
inline float __half2float(__half h) { return float(h); }
inline __half __short_as_half(short v) { return __half_raw{(unsigned short)v}; }
inline __half __ushort_as_half(unsigned short v) { return __half_raw{v}; }
inline short __half_as_short(__half h) { return short(h.__x); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
#define CUBEHIP_H2I(name, T)                                                   \
	inline T __half2##name##_rn(__half h) { return static_cast<T>(nearbyintf(float(h))); } \
	inline T __half2##name##_rz(__half h) { return static_cast<T>(truncf(float(h))); }     \
	inline T __half2##name##_rd(__half h) { return static_cast<T>(floorf(float(h))); }     \
	inline T __half2##name##_ru(__half h) { return static_cast<T>(ceilf(float(h))); }
CUBEHIP_H2I(int, int) CUBEHIP_H2I(uint, unsigned) CUBEHIP_H2I(short, short) CUBEHIP_H2I(ushort, unsigned short)
CUBEHIP_H2I(ll, long long) CUBEHIP_H2I(ull, unsigned long long)
#undef CUBEHIP_H2I
#define CUBEHIP_I2H(name, T)                                                                   \
	inline __half __##name##2half_rn(T v) { return __half(float(v)); }                          \
	inline __half __##name##2half_rz(T v) { return __float2half_rz(float(v)); }                 \
	inline __half __##name##2half_rd(T v) { return __float2half_rd(float(v)); }                 \
	inline __half __##name##2half_ru(T v) { return __float2half_ru(float(v)); }
CUBEHIP_I2H(int, int) CUBEHIP_I2H(uint, unsigned) CUBEHIP_I2H(short, short) CUBEHIP_I2H(ushort, unsigned short)
CUBEHIP_I2H(ll, long long) CUBEHIP_I2H(ull, unsigned long long)
#undef CUBEHIP_I2H
inline __half2 __half2half2(__half h) { return __half2(h, h); }
inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
inline float2 __half22float2(__half2 h) { return float2{float(h.x), float(h.y)}; }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
inline __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }
inline __half2 make_half2(__half a, __half b) { return __half2(a, b); }

/* ---- arithmetic and comparisons -------------------------------------------------- */
inline float cubehip_sat(float f) { return f != f ? 0.0f : (f < 0.0f ? 0.0f : (f > 1.0f ? 1.0f : f)); }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hadd_sat(__half a, __half b) { return __half(cubehip_sat(float(a + b))); }
inline __half __hsub_sat(__half a, __half b) { return __half(cubehip_sat(float(a - b))); }
inline __half __hmul_sat(__half a, __half b) { return __half(cubehip_sat(float(a * b))); }
inline __half __hfma(__half a, __half b, __half c) { return __half(fmaf(float(a), float(b), float(c))); }
inline __half __hfma_sat(__half a, __half b, __half c) { return __half(cubehip_sat(float(__hfma(a, b, c)))); }
inline __half __hneg(__half a) { return -a; }
inline __half __habs(__half a) { __half r = a; r.__x &= 0x7fff; return r; }
inline bool __heq(__half a, __half b) { return a == b; }
/* Ordered, as every comparison here but the u-suffixed ones: false when a side is NaN. */
inline bool __hne(__half a, __half b) { return a < b || a > b; }
inline bool __hlt(__half a, __half b) { return a < b; }
inline bool __hle(__half a, __half b) { return a <= b; }
inline bool __hgt(__half a, __half b) { return a > b; }
inline bool __hge(__half a, __half b) { return a >= b; }
inline bool __hisnan(__half a) { return (a.__x & 0x7fff) > 0x7c00; }
inline bool __hisinf(__half a) { return (a.__x & 0x7fff) == 0x7c00; }
/* The unordered comparisons are true when either side is NaN. */
inline bool __hequ(__half a, __half b) { return __hisnan(a) || __hisnan(b) || a == b; }
inline bool __hneu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || a != b; }
inline bool __hltu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || a < b; }
inline bool __hleu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || a <= b; }
inline bool __hgtu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || a > b; }
inline bool __hgeu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || a >= b; }
inline __half __hmax(__half a, __half b) { return __half(fmaxf(float(a), float(b))); }
inline __half __hmin(__half a, __half b) { return __half(fminf(float(a), float(b))); }
#define CUBEHIP_HMATH(name, expr) inline __half name(__half h) { const float x = float(h); return __half(float(expr)); }
CUBEHIP_HMATH(hsqrt, sqrtf(x)) CUBEHIP_HMATH(hrsqrt, 1.0f / sqrtf(x)) CUBEHIP_HMATH(hrcp, 1.0f / x)
CUBEHIP_HMATH(hexp, expf(x)) CUBEHIP_HMATH(hexp2, exp2f(x)) CUBEHIP_HMATH(hexp10, powf(10.0f, x))
CUBEHIP_HMATH(hlog, logf(x)) CUBEHIP_HMATH(hlog2, log2f(x)) CUBEHIP_HMATH(hlog10, log10f(x))
CUBEHIP_HMATH(hsin, sinf(x)) CUBEHIP_HMATH(hcos, cosf(x)) CUBEHIP_HMATH(hceil, ceilf(x))
CUBEHIP_HMATH(hfloor, floorf(x)) CUBEHIP_HMATH(htrunc, truncf(x)) CUBEHIP_HMATH(hrint, nearbyintf(x))
#undef CUBEHIP_HMATH

/* half2: the same, lane by lane; the b-prefixed comparisons are true when both lanes are. */
#define CUBEHIP_H2BIN(name, f) inline __half2 name(__half2 a, __half2 b) { return __half2(f(a.x, b.x), f(a.y, b.y)); }
CUBEHIP_H2BIN(__hadd2, __hadd) CUBEHIP_H2BIN(__hsub2, __hsub) CUBEHIP_H2BIN(__hmul2, __hmul) CUBEHIP_H2BIN(__h2div, __hdiv)
CUBEHIP_H2BIN(__hadd2_sat, __hadd_sat) CUBEHIP_H2BIN(__hsub2_sat, __hsub_sat) CUBEHIP_H2BIN(__hmul2_sat, __hmul_sat)
CUBEHIP_H2BIN(__hmax2, __hmax) CUBEHIP_H2BIN(__hmin2, __hmin)
#undef CUBEHIP_H2BIN
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __half2 __hfma2_sat(__half2 a, __half2 b, __half2 c) { return __half2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); }
inline __half2 __hneg2(__half2 a) { return -a; }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
#define CUBEHIP_H2CMP(op)                                                                                               \
	inline __half2 __h##op##2(__half2 a, __half2 b) { return __half2(__half(__h##op(a.x, b.x) ? 1.0f : 0.0f), __half(__h##op(a.y, b.y) ? 1.0f : 0.0f)); } \
	inline bool __hb##op##2(__half2 a, __half2 b) { return __h##op(a.x, b.x) && __h##op(a.y, b.y); }
CUBEHIP_H2CMP(eq) CUBEHIP_H2CMP(ne) CUBEHIP_H2CMP(lt) CUBEHIP_H2CMP(le) CUBEHIP_H2CMP(gt) CUBEHIP_H2CMP(ge)
CUBEHIP_H2CMP(equ) CUBEHIP_H2CMP(neu) CUBEHIP_H2CMP(ltu) CUBEHIP_H2CMP(leu) CUBEHIP_H2CMP(gtu) CUBEHIP_H2CMP(geu)
#undef CUBEHIP_H2CMP
inline __half2 __hisnan2(__half2 a) { return __half2(__half(__hisnan(a.x) ? 1.0f : 0.0f), __half(__hisnan(a.y) ? 1.0f : 0.0f)); }
#define CUBEHIP_H2MATH(name) inline __half2 h2##name(__half2 a) { return __half2(h##name(a.x), h##name(a.y)); }
CUBEHIP_H2MATH(sqrt) CUBEHIP_H2MATH(rsqrt) CUBEHIP_H2MATH(rcp) CUBEHIP_H2MATH(exp) CUBEHIP_H2MATH(exp2) CUBEHIP_H2MATH(exp10)
CUBEHIP_H2MATH(log) CUBEHIP_H2MATH(log2) CUBEHIP_H2MATH(log10) CUBEHIP_H2MATH(sin) CUBEHIP_H2MATH(cos) CUBEHIP_H2MATH(ceil)
CUBEHIP_H2MATH(floor) CUBEHIP_H2MATH(trunc) CUBEHIP_H2MATH(rint)
#undef CUBEHIP_H2MATH
/* Atomic add on halves: a compare-and-swap loop on the 16 bits (HIP has it for half2). */
inline __half atomicAdd(__half* p, __half v) {
	unsigned short* bp = &p->__x;
	unsigned short old = __atomic_load_n(bp, __ATOMIC_RELAXED);
	for (;;) {
		__half o = __half_raw{old};
		unsigned short n = __half(float(o) + float(v)).__x;
		if (__atomic_compare_exchange_n(bp, &old, n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return o;
	}
}
inline __half2 atomicAdd(__half2* p, __half2 v) { return __half2(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)); }
