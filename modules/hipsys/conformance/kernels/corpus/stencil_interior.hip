// A Jacobi sweep over the interior of an n x n grid: each thread's column is the global
// index plus one (the first interior point), guarded by the far edge, the common shape of
// a stencil with a one-point halo; a second kernel walks rows with a 2-D block.
#include <hip/hip_runtime.h>

extern "C" __global__ void jacobi_interior(const float* in, float* out, int n) {
	int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int y = blockIdx.y + 1;
	if (x < n - 1) out[y * n + x] = 0.25f * (in[y * n + x - 1] + in[y * n + x + 1] + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}

extern "C" __global__ void jacobi_interior_2d(const float* in, float* out, int n) {
	const int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
	if (x < n - 1 && y < n - 1) out[y * n + x] = in[y * n + x] - 0.5f * (in[y * n + x - 1] + in[y * n + x + 1]);
}
