// A cooperative launch, as CUDA's and HIP's guides use this_grid().sync(): a reduction in
// one launch (each block sums its share into a partial, the grid's barrier, then block 0
// sums the partials), and rounds of the barrier after each of which every block reads
// what every other block wrote in that round.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

#define BLOCK 256

extern "C" __global__ void grid_reduce(const int* in, int* partial, int* out, int n) {
	cg::grid_group grid = cg::this_grid();
	cg::thread_block block = cg::this_thread_block();
	__shared__ int s[BLOCK];
	int v = 0;
	for (unsigned i = grid.thread_rank(); i < (unsigned)n; i += grid.size()) v += in[i];
	s[block.thread_rank()] = v;
	block.sync();
	for (unsigned k = BLOCK / 2; k > 0; k /= 2) {
		if (block.thread_rank() < k) s[block.thread_rank()] += s[block.thread_rank() + k];
		block.sync();
	}
	if (block.thread_rank() == 0) partial[blockIdx.x] = s[0];
	grid.sync();
	if (blockIdx.x == 0) {
		int t = 0;
		for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) t += partial[b];
		s[threadIdx.x] = t;
		block.sync();
		for (unsigned k = BLOCK / 2; k > 0; k /= 2) {
			if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
			block.sync();
		}
		if (threadIdx.x == 0) {
			out[0] = s[0];
			out[1] = grid.is_valid() ? 1 : 0;
		}
	}
}

extern "C" __global__ void grid_rounds(int* slots, int* bad, int rounds) {
	cg::grid_group grid = cg::this_grid();
	for (int r = 1; r <= rounds; r++) {
		if (threadIdx.x == 0) slots[blockIdx.x] = r;
		cg::sync(grid);
		for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
			if (slots[b] != r) atomicAdd(bad, 1);
		grid.sync();
	}
}
