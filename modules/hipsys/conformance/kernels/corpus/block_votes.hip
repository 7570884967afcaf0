// Barriers that vote: __syncthreads_count returns, to every thread of the block, how many
// threads passed a non-zero predicate; __syncthreads_and whether all did; __syncthreads_or
// whether any did. Each is also a __syncthreads, so the votes can repeat in a loop.
#include <hip/hip_runtime.h>

extern "C" __global__ void block_votes(const int* in, int* out, int rounds) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int v = in[i];
	int counts = 0, alls = 0, anys = 0;
	for (int r = 0; r < rounds; r++) {
		counts = counts * 1000 + __syncthreads_count(v % (r + 2) == 0);
		alls = alls * 2 + (__syncthreads_and(v > r) ? 1 : 0);
		anys = anys * 2 + (__syncthreads_or(v == 50 + r) ? 1 : 0);
	}
	out[3 * i] = counts;
	out[3 * i + 1] = alls;
	out[3 * i + 2] = anys;
}
