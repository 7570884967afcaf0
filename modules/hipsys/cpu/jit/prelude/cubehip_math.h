/* cubehip_math.h: HIP's math API on the host: the float and double functions HIP's
 * reference lists, the intrinsics (__expf, __fadd_rz, ...), the integer intrinsics and
 * the type conversions. <math.h> (through the prelude) gives C's functions and puts C++'s
 * float overloads in the global namespace, so sqrt(x) of a float is a float as on a GPU;
 * these are HIP's additions. The fast intrinsics are the precise functions here, which
 * the GPU's accuracy bounds allow. */
#pragma once

namespace cubehip {
/* Rounds a double that holds an exact (or nearly exact) result to float in the direction
 * a _rd/_ru/_rz intrinsic names: the nearest float, stepped once if it lies on the wrong
 * side. */
inline float round_dir(double d, int dir) {
	float f = float(d);
	if (dir < 0 && double(f) > d) f = nextafterf(f, -INFINITY);
	if (dir > 0 && double(f) < d) f = nextafterf(f, INFINITY);
	if (dir == 0 && fabs(double(f)) > fabs(d)) f = nextafterf(f, 0.0f);
	return f;
}
/* The same for doubles, from a long double result (80-bit on x86: exact for + and *). */
inline double round_dir(long double d, int dir) {
	double f = double(d);
	if (dir < 0 && (long double)f > d) f = nextafter(f, -INFINITY);
	if (dir > 0 && (long double)f < d) f = nextafter(f, INFINITY);
	if (dir == 0 && fabsl((long double)f) > fabsl(d)) f = nextafter(f, 0.0);
	return f;
}
/* erfinv by Giles' single-precision approximation, refined with two Newton steps on erf,
 * which brings it to double precision. */
inline double erfinv_d(double y) {
	if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
	if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
	double w = -log((1.0 - y) * (1.0 + y)), x;
	if (w < 5.0) {
		w -= 2.5;
		double p = 2.81022636e-08;
		p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
		p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
		p = 0.246640727 + p * w; p = 1.50140941 + p * w;
		x = p * y;
	} else {
		w = sqrt(w) - 3.0;
		double p = -0.000200214257;
		p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
		p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
		p = 1.00167406 + p * w; p = 2.83297682 + p * w;
		x = p * y;
	}
	for (int i = 0; i < 2; i++) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
	return x;
}
/* Modified Bessel functions of the first kind, orders 0 and 1, by their power series
 * (which converge for every x; large x takes more terms). */
inline double bessel_i(int order, double x) {
	double term = order == 0 ? 1.0 : x / 2, sum = term, q = x * x / 4;
	for (int k = 1; k < 500 && fabs(term) > 1e-17 * fabs(sum); k++) {
		term *= q / (double(k) * double(k + order));
		sum += term;
	}
	return sum;
}
/* sin(pi x) and cos(pi x) exact at integers and half-integers: reduce x to [-1/4, 1/4]
 * around a multiple of 1/2 first. */
inline void sincospi_d(double x, double* s, double* c) {
	if (!std::isfinite(x)) { *s = *c = NAN; return; }
	double r = remainder(x, 2.0); /* [-1, 1] */
	double q = nearbyint(r * 2);   /* quadrant: -2..2 */
	double f = (r - q / 2) * M_PI; /* [-pi/4, pi/4] */
	double sf = sin(f), cf = cos(f);
	switch ((int(q) % 4 + 4) % 4) {
	case 0: *s = sf; *c = cf; break;
	case 1: *s = cf; *c = -sf; break;
	case 2: *s = -sf; *c = -cf; break;
	default: *s = -cf; *c = sf; break;
	}
	if (*s == 0) *s = copysign(0.0, x);
}
} // namespace cubehip

/* ---- float ---------------------------------------------------------------------- */
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline float exp10f(float x) { return powf(10.0f, x); }
inline float fdividef(float a, float b) { return a / b; }
inline void sincospif(float x, float* s, float* c) { double ds, dc; cubehip::sincospi_d(x, &ds, &dc); *s = float(ds); *c = float(dc); }
inline float sinpif(float x) { float s, c; sincospif(x, &s, &c); return s; }
inline float cospif(float x) { float s, c; sincospif(x, &s, &c); return c; }
inline float rhypotf(float x, float y) { return float(1.0 / hypot(double(x), double(y))); }
inline float norm3df(float a, float b, float c) { return float(sqrt(double(a) * a + double(b) * b + double(c) * c)); }
inline float norm4df(float a, float b, float c, float d) { return float(sqrt(double(a) * a + double(b) * b + double(c) * c + double(d) * d)); }
inline float rnorm3df(float a, float b, float c) { return float(1.0 / sqrt(double(a) * a + double(b) * b + double(c) * c)); }
inline float rnorm4df(float a, float b, float c, float d) { return float(1.0 / sqrt(double(a) * a + double(b) * b + double(c) * c + double(d) * d)); }
inline float normf(int n, const float* a) { double s = 0; for (int i = 0; i < n; i++) s += double(a[i]) * a[i]; return float(sqrt(s)); }
inline float rnormf(int n, const float* a) { double s = 0; for (int i = 0; i < n; i++) s += double(a[i]) * a[i]; return float(1.0 / sqrt(s)); }
inline float erfinvf(float y) { return float(cubehip::erfinv_d(y)); }
inline float erfcinvf(float y) { return float(cubehip::erfinv_d(1.0 - double(y))); }
inline float erfcxf(float x) { return float(exp(double(x) * x) * erfc(double(x))); }
inline float normcdff(float x) { return float(0.5 * erfc(-double(x) / M_SQRT2)); }
inline float normcdfinvf(float p) { return float(-M_SQRT2 * cubehip::erfinv_d(1.0 - 2.0 * double(p))); }
inline float cyl_bessel_i0f(float x) { return float(cubehip::bessel_i(0, x)); }
inline float cyl_bessel_i1f(float x) { return float(cubehip::bessel_i(1, x)); }
/* ---- double --------------------------------------------------------------------- */
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline void sincospi(double x, double* s, double* c) { cubehip::sincospi_d(x, s, c); }
inline double sinpi(double x) { double s, c; sincospi(x, &s, &c); return s; }
inline double cospi(double x) { double s, c; sincospi(x, &s, &c); return c; }
inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
inline double norm4d(double a, double b, double c, double d) { return sqrt(a * a + b * b + c * c + d * d); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
inline double rnorm4d(double a, double b, double c, double d) { return 1.0 / norm4d(a, b, c, d); }
inline double norm(int n, const double* a) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * a[i]; return sqrt(s); }
inline double rnorm(int n, const double* a) { return 1.0 / norm(n, a); }
inline double erfinv(double y) { return cubehip::erfinv_d(y); }
inline double erfcinv(double y) { return cubehip::erfinv_d(1.0 - y); }
inline double erfcx(double x) { return x < 25 ? exp(x * x) * erfc(x) : 1.0 / (x * sqrt(M_PI)) * (1 - 1 / (2 * x * x)); }
inline double normcdf(double x) { return 0.5 * erfc(-x / M_SQRT2); }
inline double normcdfinv(double p) { return -M_SQRT2 * cubehip::erfinv_d(1.0 - 2.0 * p); }
inline double cyl_bessel_i0(double x) { return cubehip::bessel_i(0, x); }
inline double cyl_bessel_i1(double x) { return cubehip::bessel_i(1, x); }

/* ---- float intrinsics: _rn is IEEE's default; _rz, _rd, _ru round the exact result. -- */
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
#define CUBEHIP_FOP(name, expr)                                                                      \
	inline float name##_rn(float a, float b) { return float(expr); }                                 \
	inline float name##_rz(float a, float b) { return cubehip::round_dir(double(expr), 0); }         \
	inline float name##_rd(float a, float b) { return cubehip::round_dir(double(expr), -1); }        \
	inline float name##_ru(float a, float b) { return cubehip::round_dir(double(expr), 1); }
CUBEHIP_FOP(__fadd, double(a) + double(b))
CUBEHIP_FOP(__fsub, double(a) - double(b))
CUBEHIP_FOP(__fmul, double(a) * double(b))
CUBEHIP_FOP(__fdiv, double(a) / double(b))
#undef CUBEHIP_FOP
#define CUBEHIP_FUN(name, expr)                                                               \
	inline float name##_rn(float a) { return float(expr); }                                   \
	inline float name##_rz(float a) { return cubehip::round_dir(double(expr), 0); }           \
	inline float name##_rd(float a) { return cubehip::round_dir(double(expr), -1); }          \
	inline float name##_ru(float a) { return cubehip::round_dir(double(expr), 1); }
CUBEHIP_FUN(__frcp, 1.0 / double(a))
CUBEHIP_FUN(__fsqrt, sqrt(double(a)))
#undef CUBEHIP_FUN
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fmaf_rz(float a, float b, float c) { return cubehip::round_dir(fma(double(a), double(b), double(c)), 0); }
inline float __fmaf_rd(float a, float b, float c) { return cubehip::round_dir(fma(double(a), double(b), double(c)), -1); }
inline float __fmaf_ru(float a, float b, float c) { return cubehip::round_dir(fma(double(a), double(b), double(c)), 1); }
/* ---- double intrinsics ---------------------------------------------------------- */
#define CUBEHIP_DOP(name, expr)                                                                      \
	inline double name##_rn(double a, double b) { return double(expr); }                             \
	inline double name##_rz(double a, double b) { return cubehip::round_dir((long double)(expr), 0); }  \
	inline double name##_rd(double a, double b) { return cubehip::round_dir((long double)(expr), -1); } \
	inline double name##_ru(double a, double b) { return cubehip::round_dir((long double)(expr), 1); }
CUBEHIP_DOP(__dadd, (long double)a + b)
CUBEHIP_DOP(__dsub, (long double)a - b)
CUBEHIP_DOP(__dmul, (long double)a * b)
CUBEHIP_DOP(__ddiv, (long double)a / b)
#undef CUBEHIP_DOP
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

/* ---- bit reinterpretation and conversions ---------------------------------------- */
inline float __int_as_float(int x) { float r; std::memcpy(&r, &x, 4); return r; }
inline int __float_as_int(float x) { int r; std::memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned x) { float r; std::memcpy(&r, &x, 4); return r; }
inline unsigned __float_as_uint(float x) { unsigned r; std::memcpy(&r, &x, 4); return r; }
inline double __longlong_as_double(long long x) { double r; std::memcpy(&r, &x, 8); return r; }
inline long long __double_as_longlong(double x) { long long r; std::memcpy(&r, &x, 8); return r; }
inline int __double2hiint(double x) { return int(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return int(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) { return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo)); }
/* Float to integer in each rounding direction (rn: to nearest even). */
#define CUBEHIP_F2I(from, F, to, T)                                      \
	inline T __##from##2##to##_rn(F x) { return static_cast<T>(nearbyint(x)); } \
	inline T __##from##2##to##_rz(F x) { return static_cast<T>(trunc(x)); }     \
	inline T __##from##2##to##_rd(F x) { return static_cast<T>(floor(x)); }     \
	inline T __##from##2##to##_ru(F x) { return static_cast<T>(ceil(x)); }
CUBEHIP_F2I(float, float, int, int)
CUBEHIP_F2I(float, float, uint, unsigned)
CUBEHIP_F2I(float, float, ll, long long)
CUBEHIP_F2I(float, float, ull, unsigned long long)
CUBEHIP_F2I(double, double, int, int)
CUBEHIP_F2I(double, double, uint, unsigned)
CUBEHIP_F2I(double, double, ll, long long)
CUBEHIP_F2I(double, double, ull, unsigned long long)
#undef CUBEHIP_F2I
/* Integer to float in each direction: rounding the exact value held in a long double. */
#define CUBEHIP_I2F(from, F, to, T)                                                             \
	inline T __##from##2##to##_rn(F x) { return T(x); }                                         \
	inline T __##from##2##to##_rz(F x) { return T(cubehip::round_dir((long double)x, 0)); }     \
	inline T __##from##2##to##_rd(F x) { return T(cubehip::round_dir((long double)x, -1)); }    \
	inline T __##from##2##to##_ru(F x) { return T(cubehip::round_dir((long double)x, 1)); }
CUBEHIP_I2F(int, int, double, double)
CUBEHIP_I2F(uint, unsigned, double, double)
CUBEHIP_I2F(ll, long long, double, double)
CUBEHIP_I2F(ull, unsigned long long, double, double)
#undef CUBEHIP_I2F
#define CUBEHIP_I2FF(from, F)                                                                      \
	inline float __##from##2float_rn(F x) { return float(x); }                                     \
	inline float __##from##2float_rz(F x) { return cubehip::round_dir(double(cubehip::round_dir((long double)x, 0)), 0); }  \
	inline float __##from##2float_rd(F x) { return cubehip::round_dir(double(cubehip::round_dir((long double)x, -1)), -1); } \
	inline float __##from##2float_ru(F x) { return cubehip::round_dir(double(cubehip::round_dir((long double)x, 1)), 1); }
CUBEHIP_I2FF(int, int)
CUBEHIP_I2FF(uint, unsigned)
CUBEHIP_I2FF(ll, long long)
CUBEHIP_I2FF(ull, unsigned long long)
#undef CUBEHIP_I2FF
inline float __double2float_rn(double x) { return float(x); }
inline float __double2float_rz(double x) { return cubehip::round_dir(x, 0); }
inline float __double2float_rd(double x) { return cubehip::round_dir(x, -1); }
inline float __double2float_ru(double x) { return cubehip::round_dir(x, 1); }

/* ---- integer intrinsics ----------------------------------------------------------- */
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(int(x)); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
inline unsigned __brev(unsigned x) {
	x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
	x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
	x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
	return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
	return ((unsigned long long)__brev(unsigned(x)) << 32) | __brev(unsigned(x >> 32));
}
/* Byte s of the 8 bytes {y, x} for each selector nibble of s (CUDA's default mode). */
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
	unsigned long long v = ((unsigned long long)y << 32) | x;
	unsigned r = 0;
	for (int i = 0; i < 4; i++) r |= unsigned((v >> (((s >> (4 * i)) & 7) * 8)) & 0xff) << (8 * i);
	return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return unsigned((v << (s & 31)) >> 32); }
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return unsigned((v << (s > 32 ? 32 : s)) >> 32); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return unsigned(v >> (s & 31)); }
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return unsigned(v >> (s > 32 ? 32 : s)); }
inline int __hadd(int a, int b) { return int(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return int(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b + 1) >> 1); }
inline int __mul24(int a, int b) { return int((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffff) * (b & 0xffffff); }
inline int __mulhi(int a, int b) { return int((long long)a * b >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((unsigned long long)a * b >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
	return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline unsigned __sad(int a, int b, unsigned c) { return c + unsigned(a > b ? (long long)a - b : (long long)b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
/* The position of the n-th set bit (1-based n) of mask at or after base, or 0xffffffff. */
inline unsigned __fns64(unsigned long long mask, unsigned base, int offset) {
	if (offset == 0) return 0xffffffffu;
	if (offset > 0) {
		for (unsigned i = base; i < 64; i++) if ((mask >> i) & 1) if (--offset == 0) return i;
	} else {
		for (int i = int(base); i >= 0; i--) if ((mask >> i) & 1) if (++offset == 0) return unsigned(i);
	}
	return 0xffffffffu;
}
inline unsigned __fns32(unsigned long long mask, unsigned base, int offset) { return __fns64(mask & 0xffffffffull, base, offset); }
inline unsigned __bitextract_u32(unsigned v, unsigned off, unsigned w) { off &= 31; w &= 31; return w == 0 ? 0 : (v >> off) & ((1u << w) - 1); }
inline unsigned long long __bitextract_u64(unsigned long long v, unsigned off, unsigned w) { off &= 63; w &= 63; return w == 0 ? 0 : (v >> off) & ((1ull << w) - 1); }
inline unsigned __bitinsert_u32(unsigned dst, unsigned src, unsigned off, unsigned w) { off &= 31; w &= 31; unsigned m = ((1u << w) - 1) << off; return (dst & ~m) | ((src << off) & m); }
inline unsigned long long __bitinsert_u64(unsigned long long dst, unsigned long long src, unsigned off, unsigned w) { off &= 63; w &= 63; unsigned long long m = ((1ull << w) - 1) << off; return (dst & ~m) | ((src << off) & m); }
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }
#if defined(__x86_64__)
inline long long clock64() { return (long long)__builtin_ia32_rdtsc(); }
#else
inline long long clock64() { long long v; asm volatile("mrs %0, cntvct_el0" : "=r"(v)); return v; }
#endif
inline long long wall_clock64() { return clock64(); }
