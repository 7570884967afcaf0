// Conditional compilation as portable sources use it: a kernel kept out by #if 0, one
// chosen per platform, and one behind a feature macro the host passes (-DWITH_SCALE).
#include <hip/hip_runtime.h>

#if 0
extern "C" __global__ void disabled_kernel(unsigned* p) { p[0] = 1; }
#endif

#if defined(__HIP_PLATFORM_AMD__)
#define PLATFORM_TAG 1
#elif defined(__HIP_PLATFORM_NVIDIA__)
#define PLATFORM_TAG 2
#else
#define PLATFORM_TAG 3
#endif

extern "C" __global__ void tag(int* out) { out[threadIdx.x] = PLATFORM_TAG * 100 + (int)threadIdx.x; }

#ifdef WITH_SCALE
extern "C" __global__ void scale(float* v, float s, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && v != NULL) v[i] *= s;
}
#endif
