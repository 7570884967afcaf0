// Block-wide inclusive prefix sum: a Hillis-Steele scan within each warp (__shfl_up_sync),
// the warp totals scanned by the first warp, then added back. The full-warp mask is
// spelled per platform, as portable HIP code does.
#include <hip/hip_runtime.h>
#if defined(__HIP_PLATFORM_AMD__)
#define FULL_MASK 0xffffffffffffffffull
#else
#define FULL_MASK 0xffffffffu
#endif

__device__ inline int warp_inclusive_scan(int v, int lane) {
	for (int d = 1; d < warpSize; d *= 2) {
		int up = __shfl_up_sync(FULL_MASK, v, d);
		if (lane >= d) v += up;
	}
	return v;
}

extern "C" __global__ void block_scan(const int* in, int* out, int n) {
	__shared__ int totals[1024 / 32];
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
	int v = i < n ? in[i] : 0;
	v = warp_inclusive_scan(v, lane);
	if (lane == warpSize - 1) totals[warp] = v;
	__syncthreads();
	if (warp == 0) {
		const int warps = blockDim.x / warpSize;
		int t = lane < warps ? totals[lane] : 0;
		t = warp_inclusive_scan(t, lane);
		if (lane < warps) totals[lane] = t;
	}
	__syncthreads();
	if (warp > 0) v += totals[warp - 1];
	if (i < n) out[i] = v;
}
