package nvidia

import "github.com/cubehip/cubehip/modules/hipsys"

// hipRuntimeHeader is the in-memory <hip/hip_runtime.h> handed to NVRTC, so a HIP
// kernel source compiles unmodified. ROCm's own NVIDIA headers include the CUDA runtime
// headers, which NVRTC does not have; this is the device-side subset HIP kernels use.
// CUDA already provides threadIdx & co., __syncthreads, atomics, math and
// __launch_bounds__ under the same names; what differs is spelled out below.
const hipRuntimeHeader = `#pragma once
#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define __HIPCC_RTC__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define __HIP__ 1

// HIP's older spellings of the built-in indices.
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#define __HIP_FULL_MASK 0xffffffffu
// NVRTC defines no NULL (it has no <cstddef>); HIP code compares pointers with it.
#ifndef NULL
#define NULL 0
#endif

// NVRTC has no <stdint.h>; HIP sources use the fixed-width names freely. The types are
// the ones libcu++ gives these names under NVRTC (64 bits as long long), because
// cuda_fp16.h brings libcu++'s in, and redeclaring an alias is legal C++ only when the
// types agree.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

// The short unsigned names AMD's HIP headers define for device code
// (amd_detail/device_library_decls.h), so a kernel written for AMD that says uint
// compiles here too; CUDA under NVRTC has none of them.
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned long long ullong;

// HIP's warp intrinsics act on the whole warp; CUDA 9 and later spell that with an
// explicit mask (_sync), and from sm_70 on the unmasked forms no longer exist. Older
// architectures keep CUDA's own unmasked declarations, which these would collide with.
#if __CUDA_ARCH__ >= 700
template <typename T>
__device__ inline T __shfl(T var, int srcLane, int width = warpSize) {
	return __shfl_sync(__HIP_FULL_MASK, var, srcLane, width);
}
template <typename T>
__device__ inline T __shfl_up(T var, unsigned int delta, int width = warpSize) {
	return __shfl_up_sync(__HIP_FULL_MASK, var, delta, width);
}
template <typename T>
__device__ inline T __shfl_down(T var, unsigned int delta, int width = warpSize) {
	return __shfl_down_sync(__HIP_FULL_MASK, var, delta, width);
}
template <typename T>
__device__ inline T __shfl_xor(T var, int laneMask, int width = warpSize) {
	return __shfl_xor_sync(__HIP_FULL_MASK, var, laneMask, width);
}
__device__ inline int __any(int predicate) { return __any_sync(__HIP_FULL_MASK, predicate); }
__device__ inline int __all(int predicate) { return __all_sync(__HIP_FULL_MASK, predicate); }
#endif
// HIP's ballot is 64 bits wide (a CDNA wavefront); on a 32-lane warp the top half is 0.
__device__ inline unsigned long long __hip_ballot(int predicate) {
	return __ballot_sync(__HIP_FULL_MASK, predicate);
}
#define __ballot(p) __hip_ballot(p)
__device__ inline unsigned int __lane_id() {
	unsigned int id;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
	return id;
}
`

// hipFP16Header maps <hip/hip_fp16.h> onto CUDA's half type. NVRTC finds cuda_fp16.h
// through the -I of the toolkit's include folder, added when one exists.
const hipFP16Header = `#pragma once
#include <hip/hip_runtime.h>
#include <cuda_fp16.h>
`

// hipComplexHeader is <hip/hip_complex.h>: HIP's complex API (hipFloatComplex,
// hipDoubleComplex, make_*, the parts, conjugate, the four operations, absolute value and
// its square, fused multiply-add and the conversions) on CUDA's float2 and double2, as HIP
// declares it on NVIDIA, where NVRTC has no such header.
const hipComplexHeader = `#pragma once
#include <hip/hip_runtime.h>
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
`

// hipBF16Header maps <hip/hip_bf16.h> onto CUDA's bfloat16.
const hipBF16Header = `#pragma once
#include <hip/hip_runtime.h>
#include <cuda_bf16.h>
typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
`

// hipCooperativeGroupsHeader maps <hip/hip_cooperative_groups.h> onto CUDA's cooperative
// groups, with the reductions and scans of its reduce.h and scan.h (CUDA 11+), which HIP's
// header offers from the one include.
const hipCooperativeGroupsHeader = `#pragma once
#include <hip/hip_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
`

// typeTraitsHeader gives <type_traits> to NVRTC, which has no C++ library of its own:
// libcu++'s traits (from the toolkit's CCCL headers), named in std as HIP code names them.
const typeTraitsHeader = `#pragma once
#include <cuda/std/type_traits>
namespace std { using namespace ::cuda::std; }
`

// stdintHeader answers #include <stdint.h>, which HIP code takes for granted and NVRTC
// does not have: the fixed-width types come with hip_runtime.h (above), the limits here.
const stdintHeader = `#pragma once
#include <hip/hip_runtime.h>
#ifndef INT8_MIN // libcu++'s <cuda/std/cstdint> defines the same limits
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
#endif
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
typedef long long intmax_t;
typedef unsigned long long uintmax_t;
#ifndef INTPTR_MAX
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#endif
#ifndef SIZE_MAX
#define SIZE_MAX UINT64_MAX
#endif
`

// cstdintHeader is <cstdint>: <stdint.h>'s names, also in std.
const cstdintHeader = `#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
}
`

// The C library headers kernels include, which NVRTC does not have: each gives the
// macros and names that device code uses from it, through libcu++ (the toolkit's CCCL
// headers, the C++ library NVRTC compiles) where it has them, named in std as well; the
// device functions themselves (printf, malloc, memcpy, the math functions) are NVRTC's
// own.
const cstddefHeader = `#pragma once
#include <cuda/std/cstddef>
typedef decltype((char*)0 - (char*)0) ptrdiff_t;
typedef decltype(nullptr) nullptr_t;
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
namespace std { using namespace ::cuda::std; }
`

const climitsHeader = `#pragma once
#include <cuda/std/climits>
`

// cfloatHeader is <float.h>/<cfloat>: libcu++'s, which under NVRTC (CUDA 13) leaves the
// C macros undefined (a kernel's FLT_MAX was an unknown identifier), so they are given
// here where it did not, with IEEE-754 binary32 and binary64's values.
const cfloatHeader = `#pragma once
#include <cuda/std/cfloat>
#ifndef FLT_RADIX
#define FLT_RADIX 2
#endif
#ifndef FLT_MANT_DIG
#define FLT_MANT_DIG 24
#endif
#ifndef DBL_MANT_DIG
#define DBL_MANT_DIG 53
#endif
#ifndef FLT_DIG
#define FLT_DIG 6
#endif
#ifndef DBL_DIG
#define DBL_DIG 15
#endif
#ifndef FLT_MIN_EXP
#define FLT_MIN_EXP (-125)
#endif
#ifndef DBL_MIN_EXP
#define DBL_MIN_EXP (-1021)
#endif
#ifndef FLT_MAX_EXP
#define FLT_MAX_EXP 128
#endif
#ifndef DBL_MAX_EXP
#define DBL_MAX_EXP 1024
#endif
#ifndef FLT_MIN_10_EXP
#define FLT_MIN_10_EXP (-37)
#endif
#ifndef DBL_MIN_10_EXP
#define DBL_MIN_10_EXP (-307)
#endif
#ifndef FLT_MAX_10_EXP
#define FLT_MAX_10_EXP 38
#endif
#ifndef DBL_MAX_10_EXP
#define DBL_MAX_10_EXP 308
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282346638528859812e+38F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.79769313486231570815e+308
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.17549435082228750797e-38F
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.22507385850720138309e-308
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.19209289550781250000e-7F
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.22044604925031308085e-16
#endif
#ifndef FLT_TRUE_MIN
#define FLT_TRUE_MIN 1.40129846432481707092e-45F
#endif
#ifndef DBL_TRUE_MIN
#define DBL_TRUE_MIN 4.94065645841246544177e-324
#endif
`

const cmathHeader = `#pragma once
#include <cuda/std/cmath>
namespace std { using namespace ::cuda::std; }
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef INFINITY
#define INFINITY HUGE_VALF
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
`

const cstdioHeader = `#pragma once
namespace std { using ::printf; }
`

const cstdlibHeader = `#pragma once
#include <cuda/std/cstdlib>
namespace std { using namespace ::cuda::std; using ::malloc; using ::free; }
`

const cstringHeader = `#pragma once
// Given as both <string.h> and <cstring>: #pragma once counts each name once, so the
// definitions are guarded for a source that includes both.
#ifndef CUBEHIP_NVRTC_CSTRING
#define CUBEHIP_NVRTC_CSTRING
#include <cstddef>
__device__ inline int memcmp(const void* a, const void* b, size_t n) {
	const unsigned char* p = (const unsigned char*)a;
	const unsigned char* q = (const unsigned char*)b;
	for (size_t i = 0; i < n; i++)
		if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
	return 0;
}
__device__ inline size_t strlen(const char* s) {
	size_t n = 0;
	while (s[n]) n++;
	return n;
}
__device__ inline int strcmp(const char* a, const char* b) {
	while (*a && *a == *b) a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}
namespace std { using ::memcpy; using ::memset; using ::memcmp; using ::strlen; using ::strcmp; }
#endif
`

const cassertHeader = `#include <cuda/std/cassert>
`

const newHeader = `#pragma once
#include <cuda/std/cstddef>
`

// builtinHeaders are the in-memory HIP headers, in the order NVRTC is given them.
var builtinHeaders = []hipsys.Header{
	{Name: "hip/hip_runtime.h", Source: hipRuntimeHeader},
	{Name: "hip/hip_runtime_api.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/hip_fp16.h", Source: hipFP16Header},
	{Name: "hip/hip_bf16.h", Source: hipBF16Header},
	{Name: "hip/hip_complex.h", Source: hipComplexHeader},
	{Name: "hip/hip_bfloat16.h", Source: hipBF16Header},
	{Name: "hip/hip_cooperative_groups.h", Source: hipCooperativeGroupsHeader},
	{Name: "hip/hip_vector_types.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/math_functions.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/device_functions.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/hip_common.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "type_traits", Source: typeTraitsHeader},
	{Name: "stdint.h", Source: stdintHeader},
	{Name: "cstdint", Source: cstdintHeader},
	{Name: "stddef.h", Source: cstddefHeader},
	{Name: "cstddef", Source: cstddefHeader},
	{Name: "limits.h", Source: climitsHeader},
	{Name: "climits", Source: climitsHeader},
	{Name: "float.h", Source: cfloatHeader},
	{Name: "cfloat", Source: cfloatHeader},
	{Name: "math.h", Source: cmathHeader},
	{Name: "cmath", Source: cmathHeader},
	{Name: "stdio.h", Source: cstdioHeader},
	{Name: "cstdio", Source: cstdioHeader},
	{Name: "stdlib.h", Source: cstdlibHeader},
	{Name: "cstdlib", Source: cstdlibHeader},
	{Name: "string.h", Source: cstringHeader},
	{Name: "cstring", Source: cstringHeader},
	{Name: "assert.h", Source: cassertHeader},
	{Name: "cassert", Source: cassertHeader},
	{Name: "new", Source: newHeader},
}

// programHeaders is the caller's headers followed by the built-in ones it does not
// replace: a caller's header of the same name wins.
func programHeaders(user []hipsys.Header) []hipsys.Header {
	out := append([]hipsys.Header(nil), user...)
	for _, b := range builtinHeaders {
		replaced := false
		for _, u := range user {
			replaced = replaced || u.Name == b.Name
		}
		if !replaced {
			out = append(out, b)
		}
	}
	return out
}
