/* cubehip_bf16.h: HIP's bfloat16 (<hip/hip_bf16.h>, <hip/hip_bfloat16.h>) on the host:
 * __hip_bfloat16 and __hip_bfloat162, the upper 16 bits of a float, converted with
 * round-to-nearest-even and computed in float, rounding once per operation. */
#pragma once

namespace cubehip {
inline unsigned short f2bf_bits(float f) {
	uint32_t u;
	std::memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40); /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (unsigned short)(u >> 16);
}
inline float bf2f(unsigned short b) {
	uint32_t u = uint32_t(b) << 16;
	float f;
	std::memcpy(&f, &u, 4);
	return f;
}
} // namespace cubehip

struct __hip_bfloat16 {
	unsigned short data;
	__hip_bfloat16() = default;
	__hip_bfloat16(float f) : data(cubehip::f2bf_bits(f)) {}
	__hip_bfloat16(double d) : data(cubehip::f2bf_bits(float(d))) {}
	__hip_bfloat16(int v) : data(cubehip::f2bf_bits(float(v))) {}
	__hip_bfloat16(unsigned v) : data(cubehip::f2bf_bits(float(v))) {}
	operator float() const { return cubehip::bf2f(data); }
	__hip_bfloat16& operator+=(__hip_bfloat16 o) { return *this = __hip_bfloat16(float(*this) + float(o)); }
	__hip_bfloat16& operator-=(__hip_bfloat16 o) { return *this = __hip_bfloat16(float(*this) - float(o)); }
	__hip_bfloat16& operator*=(__hip_bfloat16 o) { return *this = __hip_bfloat16(float(*this) * float(o)); }
	__hip_bfloat16& operator/=(__hip_bfloat16 o) { return *this = __hip_bfloat16(float(*this) / float(o)); }
};
struct __hip_bfloat162 {
	__hip_bfloat16 x, y;
	__hip_bfloat162() = default;
	__hip_bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) : x(a), y(b) {}
};
typedef __hip_bfloat16 hip_bfloat16;

namespace cubehip {
inline __hip_bfloat16 bf_from_bits(unsigned short b) { __hip_bfloat16 r; r.data = b; return r; }
}
inline __hip_bfloat16 operator+(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) + float(b)); }
inline __hip_bfloat16 operator-(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) - float(b)); }
inline __hip_bfloat16 operator*(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) * float(b)); }
inline __hip_bfloat16 operator/(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(float(a) / float(b)); }
inline __hip_bfloat16 operator-(__hip_bfloat16 a) { return cubehip::bf_from_bits(a.data ^ 0x8000); }
inline bool operator==(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) == float(b); }
inline bool operator!=(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) != float(b); }
inline bool operator<(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) < float(b); }
inline bool operator<=(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) <= float(b); }
inline bool operator>(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) > float(b); }
inline bool operator>=(__hip_bfloat16 a, __hip_bfloat16 b) { return float(a) >= float(b); }
#define CUBEHIP_BF_MIXED(op)                                                                                                                  \
	template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value>> inline auto operator op(__hip_bfloat16 a, T b) { return float(a) op b; } \
	template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value>> inline auto operator op(T a, __hip_bfloat16 b) { return a op float(b); }
CUBEHIP_BF_MIXED(+) CUBEHIP_BF_MIXED(-) CUBEHIP_BF_MIXED(*) CUBEHIP_BF_MIXED(/)
CUBEHIP_BF_MIXED(==) CUBEHIP_BF_MIXED(!=) CUBEHIP_BF_MIXED(<) CUBEHIP_BF_MIXED(<=) CUBEHIP_BF_MIXED(>) CUBEHIP_BF_MIXED(>=)
#undef CUBEHIP_BF_MIXED
inline __hip_bfloat162 operator+(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x + b.x, a.y + b.y); }
inline __hip_bfloat162 operator-(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x - b.x, a.y - b.y); }
inline __hip_bfloat162 operator*(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x * b.x, a.y * b.y); }
inline __hip_bfloat162 operator/(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x / b.x, a.y / b.y); }

inline __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }
inline float __bfloat162float(__hip_bfloat16 b) { return float(b); }
inline __hip_bfloat16 __double2bfloat16(double d) { return __hip_bfloat16(float(d)); }
inline unsigned short __bfloat16_as_ushort(__hip_bfloat16 b) { return b.data; }
inline short __bfloat16_as_short(__hip_bfloat16 b) { return short(b.data); }
inline __hip_bfloat16 __ushort_as_bfloat16(unsigned short v) { return cubehip::bf_from_bits(v); }
inline __hip_bfloat16 __short_as_bfloat16(short v) { return cubehip::bf_from_bits((unsigned short)v); }
inline __hip_bfloat162 __bfloat162bfloat162(__hip_bfloat16 b) { return __hip_bfloat162(b, b); }
inline __hip_bfloat162 __halves2bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat162(a, b); }
inline __hip_bfloat162 __floats2bfloat162_rn(float a, float b) { return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(b)); }
inline __hip_bfloat162 __float2bfloat162_rn(float a) { return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(a)); }
inline __hip_bfloat162 __float22bfloat162_rn(float2 f) { return __hip_bfloat162(__hip_bfloat16(f.x), __hip_bfloat16(f.y)); }
inline __hip_bfloat16 __float2bfloat16_rn(float f) { return __hip_bfloat16(f); }
inline float2 __bfloat1622float2(__hip_bfloat162 b) { return float2{float(b.x), float(b.y)}; }
inline __hip_bfloat16 __low2bfloat16(__hip_bfloat162 b) { return b.x; }
inline __hip_bfloat16 __high2bfloat16(__hip_bfloat162 b) { return b.y; }
inline float __low2float(__hip_bfloat162 b) { return float(b.x); }
inline float __high2float(__hip_bfloat162 b) { return float(b.y); }
inline __hip_bfloat162 __lows2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x, b.x); }
inline __hip_bfloat162 __highs2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.y, b.y); }
inline __hip_bfloat162 __low2bfloat162(__hip_bfloat162 a) { return __hip_bfloat162(a.x, a.x); }
inline __hip_bfloat162 __high2bfloat162(__hip_bfloat162 a) { return __hip_bfloat162(a.y, a.y); }
inline __hip_bfloat16 __hadd(__hip_bfloat16 a, __hip_bfloat16 b) { return a + b; }
inline __hip_bfloat16 __hsub(__hip_bfloat16 a, __hip_bfloat16 b) { return a - b; }
inline __hip_bfloat16 __hmul(__hip_bfloat16 a, __hip_bfloat16 b) { return a * b; }
inline __hip_bfloat16 __hdiv(__hip_bfloat16 a, __hip_bfloat16 b) { return a / b; }
inline __hip_bfloat16 __hfma(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c) { return __hip_bfloat16(fmaf(float(a), float(b), float(c))); }
inline __hip_bfloat16 __hneg(__hip_bfloat16 a) { return -a; }
inline __hip_bfloat16 __habs(__hip_bfloat16 a) { return cubehip::bf_from_bits(a.data & 0x7fff); }
inline __hip_bfloat16 __hmax(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(fmaxf(float(a), float(b))); }
inline __hip_bfloat16 __hmin(__hip_bfloat16 a, __hip_bfloat16 b) { return __hip_bfloat16(fminf(float(a), float(b))); }
inline bool __hisnan(__hip_bfloat16 a) { return (a.data & 0x7fff) > 0x7f80; }
inline bool __hisinf(__hip_bfloat16 a) { return (a.data & 0x7fff) == 0x7f80; }
/* Comparisons: the ordered ones are false when either side is NaN (__hne too, where a
 * plain != would be true), the u-suffixed unordered ones true; the h2 forms compare lane
 * by lane into 1.0 or 0.0, the hb2 forms are true when both lanes are. */
inline bool __heq(__hip_bfloat16 a, __hip_bfloat16 b) { return a == b; }
inline bool __hne(__hip_bfloat16 a, __hip_bfloat16 b) { return a < b || a > b; }
inline bool __hlt(__hip_bfloat16 a, __hip_bfloat16 b) { return a < b; }
inline bool __hle(__hip_bfloat16 a, __hip_bfloat16 b) { return a <= b; }
inline bool __hgt(__hip_bfloat16 a, __hip_bfloat16 b) { return a > b; }
inline bool __hge(__hip_bfloat16 a, __hip_bfloat16 b) { return a >= b; }
#define CUBEHIP_BF_UNORDERED(name) \
	inline bool __h##name##u(__hip_bfloat16 a, __hip_bfloat16 b) { return __hisnan(a) || __hisnan(b) || __h##name(a, b); }
CUBEHIP_BF_UNORDERED(eq) CUBEHIP_BF_UNORDERED(ne) CUBEHIP_BF_UNORDERED(lt) CUBEHIP_BF_UNORDERED(le) CUBEHIP_BF_UNORDERED(gt) CUBEHIP_BF_UNORDERED(ge)
#undef CUBEHIP_BF_UNORDERED
#define CUBEHIP_BF2CMP(op)                                                                                                  \
	inline __hip_bfloat162 __h##op##2(__hip_bfloat162 a, __hip_bfloat162 b) {                                               \
		return __hip_bfloat162(__hip_bfloat16(__h##op(a.x, b.x) ? 1.0f : 0.0f), __hip_bfloat16(__h##op(a.y, b.y) ? 1.0f : 0.0f)); \
	}                                                                                                                       \
	inline bool __hb##op##2(__hip_bfloat162 a, __hip_bfloat162 b) { return __h##op(a.x, b.x) && __h##op(a.y, b.y); }
CUBEHIP_BF2CMP(eq) CUBEHIP_BF2CMP(ne) CUBEHIP_BF2CMP(lt) CUBEHIP_BF2CMP(le) CUBEHIP_BF2CMP(gt) CUBEHIP_BF2CMP(ge)
CUBEHIP_BF2CMP(equ) CUBEHIP_BF2CMP(neu) CUBEHIP_BF2CMP(ltu) CUBEHIP_BF2CMP(leu) CUBEHIP_BF2CMP(gtu) CUBEHIP_BF2CMP(geu)
#undef CUBEHIP_BF2CMP
inline __hip_bfloat162 __hisnan2(__hip_bfloat162 a) {
	return __hip_bfloat162(__hip_bfloat16(__hisnan(a.x) ? 1.0f : 0.0f), __hip_bfloat16(__hisnan(a.y) ? 1.0f : 0.0f));
}
#define CUBEHIP_BFMATH(name, expr) inline __hip_bfloat16 name(__hip_bfloat16 h) { const float x = float(h); return __hip_bfloat16(float(expr)); }
CUBEHIP_BFMATH(hsqrt, sqrtf(x)) CUBEHIP_BFMATH(hrsqrt, 1.0f / sqrtf(x)) CUBEHIP_BFMATH(hrcp, 1.0f / x)
CUBEHIP_BFMATH(hexp, expf(x)) CUBEHIP_BFMATH(hexp2, exp2f(x)) CUBEHIP_BFMATH(hexp10, powf(10.0f, x))
CUBEHIP_BFMATH(hlog, logf(x)) CUBEHIP_BFMATH(hlog2, log2f(x)) CUBEHIP_BFMATH(hlog10, log10f(x))
CUBEHIP_BFMATH(hsin, sinf(x)) CUBEHIP_BFMATH(hcos, cosf(x)) CUBEHIP_BFMATH(hceil, ceilf(x))
CUBEHIP_BFMATH(hfloor, floorf(x)) CUBEHIP_BFMATH(htrunc, truncf(x)) CUBEHIP_BFMATH(hrint, nearbyintf(x))
#undef CUBEHIP_BFMATH
inline __hip_bfloat162 __hadd2(__hip_bfloat162 a, __hip_bfloat162 b) { return a + b; }
inline __hip_bfloat162 __hsub2(__hip_bfloat162 a, __hip_bfloat162 b) { return a - b; }
inline __hip_bfloat162 __hmul2(__hip_bfloat162 a, __hip_bfloat162 b) { return a * b; }
inline __hip_bfloat162 __h2div(__hip_bfloat162 a, __hip_bfloat162 b) { return a / b; }
inline __hip_bfloat162 __hfma2(__hip_bfloat162 a, __hip_bfloat162 b, __hip_bfloat162 c) { return __hip_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __hip_bfloat162 __hneg2(__hip_bfloat162 a) { return __hip_bfloat162(-a.x, -a.y); }
inline __hip_bfloat162 __habs2(__hip_bfloat162 a) { return __hip_bfloat162(__habs(a.x), __habs(a.y)); }
inline __hip_bfloat162 __hmax2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
inline __hip_bfloat162 __hmin2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmin(a.x, b.x), __hmin(a.y, b.y)); }
#define CUBEHIP_BF2MATH(name) inline __hip_bfloat162 h2##name(__hip_bfloat162 a) { return __hip_bfloat162(h##name(a.x), h##name(a.y)); }
CUBEHIP_BF2MATH(sqrt) CUBEHIP_BF2MATH(rsqrt) CUBEHIP_BF2MATH(rcp) CUBEHIP_BF2MATH(exp) CUBEHIP_BF2MATH(exp2) CUBEHIP_BF2MATH(exp10)
CUBEHIP_BF2MATH(log) CUBEHIP_BF2MATH(log2) CUBEHIP_BF2MATH(log10) CUBEHIP_BF2MATH(sin) CUBEHIP_BF2MATH(cos) CUBEHIP_BF2MATH(ceil)
CUBEHIP_BF2MATH(floor) CUBEHIP_BF2MATH(trunc) CUBEHIP_BF2MATH(rint)
#undef CUBEHIP_BF2MATH
/* Atomic add: a compare-and-swap loop on the 16 bits; a pair lane by lane, each lane
 * atomic on its own, as CUDA and HIP promise for their pairs. */
inline __hip_bfloat16 atomicAdd(__hip_bfloat16* p, __hip_bfloat16 v) {
	unsigned short* bp = &p->data;
	unsigned short old = __atomic_load_n(bp, __ATOMIC_RELAXED);
	for (;;) {
		const __hip_bfloat16 o = cubehip::bf_from_bits(old);
		const unsigned short n = (o + v).data;
		if (__atomic_compare_exchange_n(bp, &old, n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return o;
	}
}
inline __hip_bfloat162 atomicAdd(__hip_bfloat162* p, __hip_bfloat162 v) { return __hip_bfloat162(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)); }
