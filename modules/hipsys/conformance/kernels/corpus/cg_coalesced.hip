// Cooperative groups of any lanes of a warp: coalesced_threads() (the lanes that reach it
// together) in the warp-aggregated atomic increment of CUDA's documentation, and
// binary_partition, which splits a tile by a predicate into two groups, each reducing
// its own values with shuffles that address lanes by group rank.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

// The group's rank 0 reserves a slot per lane with one atomic; each lane takes its own.
__device__ int aggregated_increment(int* counter) {
	cg::coalesced_group active = cg::coalesced_threads();
	int first = 0;
	if (active.thread_rank() == 0) first = atomicAdd(counter, (int)active.size());
	return active.shfl(first, 0) + (int)active.thread_rank();
}

// Stream compaction of the positive values; each kept lane also records its rank among
// the warp's kept lanes and the group's shape.
extern "C" __global__ void compact_positive_cg(const int* in, int* out, int* counter, int* shapes, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const int v = in[i];
	if (v > 0) {
		cg::coalesced_group kept = cg::coalesced_threads();
		shapes[i] = (int)kept.thread_rank() + 100 * (int)kept.size() + 10000 * (int)kept.meta_group_rank() +
		            100000 * (int)kept.meta_group_size();
		out[aggregated_increment(counter)] = v;
	}
}

// Tiles of 32 split into even and odd values; rank 0 of each side writes the side's sum.
extern "C" __global__ void partition_sums(const int* in, int* sums, int* shapes) {
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int v = in[i];
	cg::coalesced_group side = cg::binary_partition(tile, (v & 1) == 0);
	int sum = v;
	for (unsigned o = 16; o > 0; o /= 2) {
		const int u = side.shfl_down(sum, o);
		if (side.thread_rank() + o < side.size()) sum += u;
	}
	sums[i] = side.thread_rank() == 0 ? sum : -1;
	shapes[i] = (int)side.thread_rank() + 100 * (int)side.size() + 10000 * (int)side.meta_group_rank() +
	            100000 * (int)side.meta_group_size();
}
