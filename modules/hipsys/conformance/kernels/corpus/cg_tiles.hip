// Cooperative groups: the block as a group, tiles of 16 threads reducing with the tile's
// shuffles, and a tile ballot.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile_sums(const int* in, int* sums, unsigned* odd_masks) {
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
	const int i = blockIdx.x * block.size() + block.thread_rank();
	int v = in[i];
	const unsigned odd = (unsigned)tile.ballot(v & 1);
	for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
	block.sync();
	if (tile.thread_rank() == 0) {
		const int t = i / 16;
		sums[t] = v;
		odd_masks[t] = odd;
	}
}
