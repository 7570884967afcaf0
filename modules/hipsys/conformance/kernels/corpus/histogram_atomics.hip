// A 256-bin byte histogram: each block counts into shared bins, then adds its bins to the
// global ones. The atomics are called as HIP code calls them, with a value of another
// type than the counter (atomicAdd(unsigned*, int)); the stats kernel uses the rest of
// the overloads.
#include <hip/hip_runtime.h>
#include <stdint.h>

extern "C" __global__ void histogram256(const unsigned char* data, int n, unsigned int* bins) {
	__shared__ unsigned int local[256];
	for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		atomicAdd(&local[data[i]], 1);
	__syncthreads();
	for (int i = threadIdx.x; i < 256; i += blockDim.x)
		if (local[i]) atomicAdd(&bins[i], local[i]);
}

// stats[0] max, [1] min, [2] count of values over 100, [3] last index written by
// atomicExch (any), [4] first index to claim the CAS slot, [5] sum as unsigned long long.
extern "C" __global__ void stats(const int* v, int n, int* stats, unsigned long long* sum) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const unsigned one = 1u;
	atomicMax(&stats[0], v[i]);
	atomicMin(&stats[1], v[i]);
	if (v[i] > 100) atomicAdd(&stats[2], one);
	atomicExch(&stats[3], (unsigned)i);
	atomicCAS(&stats[4], -1, i);
	atomicAdd(sum, (unsigned long long)v[i]);
}
