// Pairs of bfloat16 (<hip/hip_bf16.h>): a float2 rounded to a pair with
// round-to-nearest-even (__float22bfloat162_rn), pairs compared lane by lane (__hbne2 is
// true when both lanes differ, and a NaN makes a lane's comparison false), and pairs and
// single values summed with atomicAdd.
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>

extern "C" __global__ void bf16_round_compare(const float2* a, const float2* b, unsigned short* bits, int* ne, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const __hip_bfloat162 x = __float22bfloat162_rn(a[i]);
	const __hip_bfloat162 y = __float22bfloat162_rn(b[i]);
	bits[2 * i] = __bfloat16_as_ushort(__low2bfloat16(x));
	bits[2 * i + 1] = __bfloat16_as_ushort(__high2bfloat16(x));
	ne[i] = __hbne2(x, y) ? 1 : 0;
}

// Small integers, so that every partial sum is exact in bfloat16 whatever the order.
extern "C" __global__ void bf16_accumulate(const float2* in, __hip_bfloat162* pair_sum, __hip_bfloat16* low_sum, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const __hip_bfloat162 v = __float22bfloat162_rn(in[i]);
	atomicAdd(pair_sum, v);
	atomicAdd(low_sum + 1, __low2bfloat16(v));
}
