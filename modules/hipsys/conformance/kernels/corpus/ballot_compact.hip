// Votes and ballots: stream compaction of the positive values within each warp (a lane's
// slot is the number of set ballot bits below it), and per-warp any/all flags.
#include <hip/hip_runtime.h>

extern "C" __global__ void compact_positive(const int* in, int* out, int* counts, int* flags) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int lane = threadIdx.x % warpSize;
	const int warp_global = i / warpSize;
	const int v = in[i];
	const unsigned long long mask = __ballot(v > 0);
	const unsigned long long below = lane == 0 ? 0ull : (mask & (~0ull >> (64 - lane)));
	if (v > 0) out[warp_global * warpSize + __popcll(below)] = v;
	const int any_big = __any(v > 90), all_nonneg = __all(v >= 0);
	if (lane == 0) {
		counts[warp_global] = __popcll(mask);
		flags[warp_global] = any_big + 2 * all_nonneg;
	}
}
