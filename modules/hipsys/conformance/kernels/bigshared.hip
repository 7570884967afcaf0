// A block that stages its whole slice of the input in dynamic shared memory, however
// large the launch makes it, then writes the slice back reversed and doubled: every byte
// of the shared memory the launch asked for is written and read.
#include <hip/hip_runtime.h>

extern "C" __global__ void shared_window(const float* in, float* out, unsigned words) {
	extern __shared__ float window[];
	const float* src = in + (size_t)blockIdx.x * words;
	for (unsigned i = threadIdx.x; i < words; i += blockDim.x) window[i] = src[i];
	__syncthreads();
	float* dst = out + (size_t)blockIdx.x * words;
	for (unsigned i = threadIdx.x; i < words; i += blockDim.x) dst[i] = 2.0f * window[words - 1 - i];
}
