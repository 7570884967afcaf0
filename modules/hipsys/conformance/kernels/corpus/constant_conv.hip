// 1-D convolution with its filter in constant memory (initialized in the source), the
// input staged in shared memory with a halo, the usual image-filter pattern.
#include <hip/hip_runtime.h>
#define RADIUS 3
#define BLOCK 128

__constant__ float filter_taps[2 * RADIUS + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};

extern "C" __global__ void convolve(const float* in, float* out, int n) {
	__shared__ float tile[BLOCK + 2 * RADIUS];
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int t = threadIdx.x + RADIUS;
	tile[t] = i < n ? in[i] : 0.0f;
	if (threadIdx.x < RADIUS) {
		const int left = i - RADIUS, right = i + BLOCK;
		tile[threadIdx.x] = left >= 0 ? in[left] : 0.0f;
		tile[t + BLOCK] = right < n ? in[right] : 0.0f;
	}
	__syncthreads();
	if (i >= n) return;
	float acc = 0.0f;
	for (int k = -RADIUS; k <= RADIUS; ++k) acc += filter_taps[k + RADIUS] * tile[t + k];
	out[i] = acc;
}
