/* cubehip_vector.h: HIP's vector types (float4, int2, ...) as plain aggregates with x/y/z/w,
 * make_<type>() and element-wise arithmetic. Aggregates, not classes with constructors,
 * so they can live in __shared__ (thread_local) arrays without per-thread construction. */
#pragma once

/* Laid out as AMD's HIP headers lay them out (amd_hip_vector_types.h, where they are clang
 * vectors): 2- and 4-component types aligned to their whole size (uint2 8, double2 16,
 * double4 32), 1- and 3-component types to one component's (float3 is 12 bytes, aligned 4).
 * A struct holding one, or an array of them shared with a GPU, then has the same offsets
 * here as on the GPU. CUDA's vector_types.h differs only in capping the 4-component types
 * at 16 (double4 aligned 16); the conformance suite's layout table records both. */
#define CUBEHIP_VEC1(T, N) struct N##1 { T x; };
#define CUBEHIP_VEC2(T, N) struct alignas(2 * sizeof(T)) N##2 { T x, y; };
#define CUBEHIP_VEC3(T, N) struct N##3 { T x, y, z; };
#define CUBEHIP_VEC4(T, N) struct alignas(4 * sizeof(T)) N##4 { T x, y, z, w; };

#define CUBEHIP_OPS(V, N) \
	inline V operator+(V a, V b) { V r; for (int i = 0; i < N; i++) (&r.x)[i] = (&a.x)[i] + (&b.x)[i]; return r; } \
	inline V operator-(V a, V b) { V r; for (int i = 0; i < N; i++) (&r.x)[i] = (&a.x)[i] - (&b.x)[i]; return r; } \
	inline V operator*(V a, V b) { V r; for (int i = 0; i < N; i++) (&r.x)[i] = (&a.x)[i] * (&b.x)[i]; return r; } \
	inline V operator/(V a, V b) { V r; for (int i = 0; i < N; i++) (&r.x)[i] = (&a.x)[i] / (&b.x)[i]; return r; } \
	inline V& operator+=(V& a, V b) { return a = a + b; } \
	inline V& operator-=(V& a, V b) { return a = a - b; } \
	inline V& operator*=(V& a, V b) { return a = a * b; } \
	inline V& operator/=(V& a, V b) { return a = a / b; }

#define CUBEHIP_VECS(T, N) \
	CUBEHIP_VEC1(T, N) CUBEHIP_VEC2(T, N) CUBEHIP_VEC3(T, N) CUBEHIP_VEC4(T, N) \
	inline N##1 make_##N##1(T x) { return N##1{x}; } \
	inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; } \
	inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; } \
	inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; } \
	CUBEHIP_OPS(N##1, 1) CUBEHIP_OPS(N##2, 2) CUBEHIP_OPS(N##3, 3) CUBEHIP_OPS(N##4, 4)

CUBEHIP_VECS(signed char, char)
CUBEHIP_VECS(unsigned char, uchar)
CUBEHIP_VECS(short, short)
CUBEHIP_VECS(unsigned short, ushort)
CUBEHIP_VECS(int, int)
CUBEHIP_VECS(unsigned int, uint)
CUBEHIP_VECS(long, long)
CUBEHIP_VECS(unsigned long, ulong)
CUBEHIP_VECS(long long, longlong)
CUBEHIP_VECS(unsigned long long, ulonglong)
CUBEHIP_VECS(float, float)
CUBEHIP_VECS(double, double)

