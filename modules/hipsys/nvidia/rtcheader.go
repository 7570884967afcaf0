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
`

// cstdintHeader is <cstdint>: <stdint.h>'s names, also in std.
const cstdintHeader = `#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
}
`

// builtinHeaders are the in-memory HIP headers, in the order NVRTC is given them.
var builtinHeaders = []hipsys.Header{
	{Name: "hip/hip_runtime.h", Source: hipRuntimeHeader},
	{Name: "hip/hip_runtime_api.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/hip_fp16.h", Source: hipFP16Header},
	{Name: "hip/hip_bf16.h", Source: hipBF16Header},
	{Name: "hip/hip_bfloat16.h", Source: hipBF16Header},
	{Name: "hip/hip_cooperative_groups.h", Source: hipCooperativeGroupsHeader},
	{Name: "hip/hip_vector_types.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/math_functions.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/device_functions.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "hip/hip_common.h", Source: "#pragma once\n#include <hip/hip_runtime.h>\n"},
	{Name: "type_traits", Source: typeTraitsHeader},
	{Name: "stdint.h", Source: stdintHeader},
	{Name: "cstdint", Source: cstdintHeader},
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
