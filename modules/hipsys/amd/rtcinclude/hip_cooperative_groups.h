/* hip/hip_cooperative_groups.h for hiprtc before ROCm 6.1, whose own header needs the
 * parts of hip_runtime.h hiprtc leaves out: the grid of a cooperative launch, the thread
 * block, its tiles and groups of any lanes of a wavefront (coalesced_threads,
 * binary_partition), built on the warp functions and the device library's grid calls
 * every ROCm has. */
#pragma once
#include "cubehip_hiprtc.h"

namespace cooperative_groups {
namespace detail {
__device__ inline unsigned block_rank() { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
__device__ inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
} // namespace detail

class thread_block {
public:
	__device__ void sync() const { __syncthreads(); }
	__device__ unsigned thread_rank() const { return detail::block_rank(); }
	__device__ unsigned size() const { return detail::block_size(); }
	__device__ unsigned num_threads() const { return detail::block_size(); }
	__device__ dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
	__device__ dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
	__device__ dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
};
__device__ inline thread_block this_thread_block() { return thread_block(); }

/* The grid of a launch: its barrier and validity are the device library's (ockl), as in
 * ROCm's own header; valid only in a cooperative launch (hipModuleLaunchCooperativeKernel). */
} // namespace cooperative_groups
extern "C" __device__ __attribute__((const)) int __ockl_grid_is_valid(void);
extern "C" __device__ __attribute__((convergent)) void __ockl_grid_sync(void);
namespace cooperative_groups {
class grid_group {
public:
	__device__ unsigned long long num_threads() const {
		return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * detail::block_size();
	}
	__device__ unsigned long long size() const { return num_threads(); }
	__device__ unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
	__device__ unsigned long long block_rank() const {
		return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
	}
	__device__ unsigned long long thread_rank() const { return block_rank() * detail::block_size() + detail::block_rank(); }
	__device__ dim3 group_dim() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
	__device__ dim3 dim_blocks() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
	__device__ dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
	__device__ bool is_valid() const { return __ockl_grid_is_valid() != 0; }
	__device__ void sync() const { __ockl_grid_sync(); }
};
__device__ inline grid_group this_grid() { return grid_group(); }

template <unsigned N> class thread_block_tile {
	__device__ static unsigned long long lanes() {
		const unsigned long long m = N == 64 ? ~0ull : ((1ull << N) - 1);
		return m << (__lane_id() & ~(N - 1));
	}

public:
	__device__ static constexpr unsigned size() { return N; }
	__device__ static constexpr unsigned num_threads() { return N; }
	__device__ unsigned thread_rank() const { return detail::block_rank() % N; }
	__device__ unsigned meta_group_rank() const { return detail::block_rank() / N; }
	__device__ unsigned meta_group_size() const { return (detail::block_size() + N - 1) / N; }
	__device__ void sync() const { __builtin_amdgcn_wave_barrier(); }
	template <class T> __device__ T shfl(T v, int src) const { return __shfl(v, src, int(N)); }
	template <class T> __device__ T shfl_down(T v, unsigned d) const { return __shfl_down(v, d, int(N)); }
	template <class T> __device__ T shfl_up(T v, unsigned d) const { return __shfl_up(v, d, int(N)); }
	template <class T> __device__ T shfl_xor(T v, unsigned m) const { return __shfl_xor(v, int(m), int(N)); }
	__device__ unsigned long long ballot(int p) const { return (__ballot(p) & lanes()) >> (__lane_id() & ~(N - 1)); }
	__device__ bool any(int p) const { return ballot(p) != 0; }
	__device__ bool all(int p) const {
		const unsigned long long active = __ballot(1) & lanes();
		return (__ballot(p) & active) == active;
	}
};
template <unsigned N, class Parent> __device__ inline thread_block_tile<N> tiled_partition(const Parent&) { return thread_block_tile<N>(); }

/* A group of some lanes of one wavefront, named by a mask of them: the lanes active at
 * coalesced_threads(), or one side of a binary_partition. Ranks count the group's lanes
 * from the lowest; shuffles and votes address them by rank. */
class coalesced_group {
	unsigned long long mask_;
	unsigned meta_rank_, meta_size_;
	__device__ unsigned lane_of(unsigned r) const {
		unsigned long long m = mask_;
		for (unsigned k = 0; k < r; k++) m &= m - 1;
		return (unsigned)__builtin_ctzll(m);
	}

public:
	__device__ explicit coalesced_group(unsigned long long mask, unsigned meta_rank = 0, unsigned meta_size = 1)
	    : mask_(mask), meta_rank_(meta_rank), meta_size_(meta_size) {}
	__device__ unsigned size() const { return (unsigned)__builtin_popcountll(mask_); }
	__device__ unsigned num_threads() const { return size(); }
	__device__ unsigned thread_rank() const { return (unsigned)__builtin_popcountll(mask_ & ((1ull << __lane_id()) - 1)); }
	/* binary_partition's two sides are ranks 0 (predicate false) and 1 of 2, unless every
	 * lane went one way (1 group, as coalesced_threads() always is). */
	__device__ unsigned meta_group_rank() const { return meta_rank_; }
	__device__ unsigned meta_group_size() const { return meta_size_; }
	__device__ unsigned long long cubehip_mask() const { return mask_; }
	__device__ void sync() const { __builtin_amdgcn_wave_barrier(); }
	template <class T> __device__ T shfl(T v, unsigned src_rank) const { return __shfl(v, (int)lane_of(src_rank % size())); }
	template <class T> __device__ T shfl_down(T v, unsigned d) const {
		const unsigned r = thread_rank() + d;
		const T u = __shfl(v, (int)(r < size() ? lane_of(r) : __lane_id()));
		return r < size() ? u : v;
	}
	template <class T> __device__ T shfl_up(T v, unsigned d) const {
		const unsigned r = thread_rank();
		const T u = __shfl(v, (int)(r >= d ? lane_of(r - d) : __lane_id()));
		return r >= d ? u : v;
	}
	/* Bit k of a ballot is the group's rank k. */
	__device__ unsigned long long ballot(int pred) const {
		const unsigned long long b = __ballot(pred) & mask_;
		unsigned long long r = 0;
		unsigned k = 0;
		for (unsigned long long m = mask_; m != 0; m &= m - 1, k++)
			if (b & (m & (~m + 1))) r |= 1ull << k;
		return r;
	}
	__device__ bool any(int pred) const { return (__ballot(pred) & mask_) != 0; }
	__device__ bool all(int pred) const { return (__ballot(pred) & mask_) == mask_; }
};
/* The lanes active here: a wavefront runs the lanes that took a branch together. */
__device__ inline coalesced_group coalesced_threads() { return coalesced_group(__ballot(1)); }
namespace detail {
__device__ inline coalesced_group binary_split(unsigned long long parent, bool pred) {
	const unsigned long long set = __ballot(pred) & parent;
	if (set == parent || set == 0) return coalesced_group(parent, 0, 1);
	return coalesced_group(pred ? set : parent & ~set, pred ? 1 : 0, 2);
}
} // namespace detail
__device__ inline coalesced_group binary_partition(const coalesced_group& g, bool pred) { return detail::binary_split(g.cubehip_mask(), pred); }
template <unsigned N> __device__ inline coalesced_group binary_partition(const thread_block_tile<N>& g, bool pred) {
	const unsigned long long m = N == 64 ? ~0ull : ((1ull << N) - 1);
	return detail::binary_split((m << (__lane_id() & ~(N - 1))) & __ballot(1), pred);
}
template <class Group> __device__ inline void sync(const Group& g) { g.sync(); }

template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { __device__ T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { __device__ T operator()(T a, T b) const { return a < b ? b : a; } };
template <unsigned N, class T, class Op> __device__ inline T reduce(const thread_block_tile<N>& g, T v, Op op) {
	for (unsigned m = N / 2; m > 0; m /= 2) v = op(v, g.shfl_xor(v, m));
	return v;
}
template <unsigned N, class T, class Op> __device__ inline T inclusive_scan(const thread_block_tile<N>& g, T v, Op op) {
	for (unsigned d = 1; d < N; d *= 2) {
		T u = g.shfl_up(v, d);
		if (g.thread_rank() >= d) v = op(v, u);
	}
	return v;
}
template <unsigned N, class T> __device__ inline T inclusive_scan(const thread_block_tile<N>& g, T v) { return inclusive_scan(g, v, plus<T>()); }
} // namespace cooperative_groups
