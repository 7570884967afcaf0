// Sum of n ints: each warp reduces with __shfl_down, warp leaders stage their sums in
// shared memory, the first warp reduces those, and one atomic per block adds the block's
// sum. Written for any warp size (warpSize is 64 on CDNA, 32 elsewhere).
#include <hip/hip_runtime.h>

__device__ inline int warp_sum(int v) {
	for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
	return v;
}

extern "C" __global__ void reduce_sum(const int* in, int n, unsigned long long* out) {
	__shared__ int warp_sums[1024 / 32];
	int sum = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += in[i];
	sum = warp_sum(sum);
	const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
	if (lane == 0) warp_sums[warp] = sum;
	__syncthreads();
	if (warp == 0) {
		const int warps = (blockDim.x + warpSize - 1) / warpSize;
		sum = lane < warps ? warp_sums[lane] : 0;
		sum = warp_sum(sum);
		if (lane == 0) atomicAdd(out, (unsigned long long)(long long)sum);
	}
}
