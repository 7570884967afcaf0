// Warp shuffles of half-precision values through the _sync forms: a butterfly sum of
// __half2 pairs with __shfl_xor_sync, a __half broadcast with __shfl_sync, and
// neighbours' values with __shfl_up_sync and __shfl_down_sync on 16-lane segments.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

extern "C" __global__ void half_shuffles(const __half* in, __half2* pair_sums, __half* out) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const unsigned lane = threadIdx.x % warpSize;
	const __half h = in[i];
	__half2 p = __halves2half2(h, __float2half(1.0f));
	for (int o = warpSize / 2; o > 0; o /= 2) p = __hadd2(p, __shfl_xor_sync(0xffffffffu, p, o));
	if (lane == 0) pair_sums[i / warpSize] = p;
	const __half first = __shfl_sync(0xffffffffu, h, 0);
	const __half up = __shfl_up_sync(0xffffffffu, h, 1, 16);
	const __half down = __shfl_down_sync(0xffffffffu, h, 2, 16);
	out[3 * i] = first;
	out[3 * i + 1] = up;
	out[3 * i + 2] = down;
}
