/* cubehip_cg.h: cooperative groups (<hip/hip_cooperative_groups.h>) on the host. */
#pragma once

namespace cooperative_groups {
/* The block a thread belongs to. */
class thread_block {
public:
	void sync() const { __syncthreads(); }
	unsigned thread_rank() const { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
	unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
	unsigned num_threads() const { return size(); }
	dim3 group_index() const { return dim3(blockIdx); }
	dim3 thread_index() const { return dim3(threadIdx); }
	dim3 group_dim() const { return dim3(blockDim); }
	dim3 dim_threads() const { return dim3(blockDim); }
};
inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block& g) { g.sync(); }
} // namespace cooperative_groups
