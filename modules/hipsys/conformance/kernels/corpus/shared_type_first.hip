// Dynamic shared memory declared with the type before __shared__, as NVIDIA's samples
// spell it: `extern float __shared__ s[];` is the same declaration as
// `extern __shared__ float s[];`, at namespace scope and in a kernel.
#include <hip/hip_runtime.h>

extern unsigned int __shared__ staged[];

// Each block reverses its slice of in through the dynamic shared array.
extern "C" __global__ void reverse_blocks(const float* in, float* out, int n) {
	extern float __shared__ tile[];
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = i < n ? in[i] : 0.0f;
	__syncthreads();
	const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
	if (j < n) out[j] = tile[threadIdx.x];
}

// The namespace-scope array: each thread stages its value and reads its neighbour's.
extern "C" __global__ void rotate_left(const unsigned* in, unsigned* out) {
	const unsigned t = threadIdx.x;
	staged[t] = in[blockIdx.x * blockDim.x + t];
	__syncthreads();
	out[blockIdx.x * blockDim.x + t] = staged[(t + 1) % blockDim.x];
}
