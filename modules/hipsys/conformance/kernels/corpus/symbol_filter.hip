// A 3x3 image filter whose taps the host writes into constant memory before each launch
// (what CUDA code does with cudaMemcpyToSymbol and HIP code with hipModuleGetGlobal and a
// copy), and a __device__ counter of the pixels the filter clipped, which the host zeroes
// before the launch and reads after it.
#include <hip/hip_runtime.h>

__constant__ float filter_mask[3][3];
__device__ unsigned int clipped_pixels;

extern "C" __global__ void filter3x3(const unsigned char* in, unsigned char* out, int width, int height) {
	const int x = blockIdx.x * blockDim.x + threadIdx.x;
	const int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= width || y >= height) return;
	float acc = 0.0f;
	for (int dy = -1; dy <= 1; ++dy) {
		for (int dx = -1; dx <= 1; ++dx) {
			const int sx = min(max(x + dx, 0), width - 1);
			const int sy = min(max(y + dy, 0), height - 1);
			acc += filter_mask[dy + 1][dx + 1] * (float)in[sy * width + sx];
		}
	}
	const float v = rintf(acc);
	if (v < 0.0f || v > 255.0f) atomicAdd(&clipped_pixels, 1u);
	out[y * width + x] = (unsigned char)fminf(fmaxf(v, 0.0f), 255.0f);
}
