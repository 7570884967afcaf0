// Device printf as kernels use it for tracing: one line per block from its first
// thread, and a result the host checks too.
#include <hip/hip_runtime.h>

extern "C" __global__ void trace(const int* in, int* out) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = in[i] * 2;
	if (threadIdx.x == 0) printf("block %d of %d: first value %d scaled %.1f\n", (int)blockIdx.x, (int)gridDim.x, in[i], 0.5 * in[i]);
}
