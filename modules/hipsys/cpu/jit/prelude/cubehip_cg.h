/* cubehip_cg.h: cooperative groups (<hip/hip_cooperative_groups.h>) on the host: the
 * thread block, tiles of it (tiled_partition) whose collectives are the warp functions
 * restricted to the tile's lanes, and groups of any lanes of a warp (coalesced_threads,
 * binary_partition). A module that names cooperative_groups runs
 * its threads as warps (cubehip_warp.h), so every member here works. The grid group
 * gives a thread its place in the launch; its sync() is the grid-wide barrier of a
 * cooperative launch (hipModuleLaunchCooperativeKernel), whose blocks all run at once, each
 * on an OS thread of its own (runner.c). In any other launch the blocks do not all run at
 * once, so the barrier could never be reached by the blocks still waiting for a thread:
 * there sync() ends the launch with an error naming it, rather than hang. */
#pragma once

namespace cooperative_groups {
namespace detail {
inline unsigned block_rank() { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }
inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
} // namespace detail

class thread_group {
protected:
	unsigned size_; /* threads in the group; a tile's when under the block's */
	explicit thread_group(unsigned size) : size_(size) {}

public:
	unsigned size() const { return size_; }
	unsigned num_threads() const { return size_; }
	unsigned thread_rank() const { return size_ >= detail::block_size() ? detail::block_rank() : detail::block_rank() % size_; }
	void sync() const {
		if (size_ >= detail::block_size()) __syncthreads();
		else __syncwarp();
	}
};

/* The block a thread belongs to. */
class thread_block : public thread_group {
public:
	thread_block() : thread_group(detail::block_size()) {}
	void sync() const { __syncthreads(); }
	unsigned thread_rank() const { return detail::block_rank(); }
	dim3 group_index() const { return dim3(blockIdx); }
	dim3 thread_index() const { return dim3(threadIdx); }
	dim3 group_dim() const { return dim3(blockDim); }
	dim3 dim_threads() const { return dim3(blockDim); }
};
inline thread_block this_thread_block() { return thread_block(); }

/* The grid of a launch. valid (is_valid()) only in a cooperative launch, whose blocks
 * all run at once, as on a GPU. */
namespace detail {
/* Grid barriers the OS thread's block has passed: one OS thread runs one block of a
 * cooperative launch, so it is the block's count. */
CUBEHIP_HIDDEN __thread unsigned long long grid_syncs;
[[noreturn]] inline void grid_misuse(int what) {
	__atomic_store_n(&cubehip::launch_tls->coop->misuse, what, __ATOMIC_RELAXED);
	__builtin_trap();
}
/* Every thread of the block gathers at a block barrier; the first to leave it waits for
 * the other blocks (the runner's barrier, which blocks this OS thread and so the block's
 * other fibers with it), and a second block barrier holds the block's threads until it
 * is back. The count read before the first barrier tells the first from the others. */
inline void grid_sync() {
	cubehip_grid* g = cubehip::launch_tls->coop;
	if (g->sync == nullptr) grid_misuse(CUBEHIP_MISUSE_GRID_SYNC);
	if (*cubehip::current_slot() == nullptr) grid_misuse(CUBEHIP_MISUSE_GRID_UNSEEN);
	const unsigned long long n = grid_syncs;
	__syncthreads();
	if (grid_syncs == n) {
		grid_syncs = n + 1;
		if (g->sync(g) != 0) __builtin_trap(); /* another block faulted: the launch is over */
	}
	__syncthreads();
}
} // namespace detail
class grid_group {
public:
	static unsigned long long num_threads() {
		return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * detail::block_size();
	}
	static unsigned long long size() { return num_threads(); }
	static unsigned long long thread_rank() { return block_rank() * detail::block_size() + detail::block_rank(); }
	static unsigned long long num_blocks() { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
	static unsigned long long block_rank() { return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }
	static dim3 group_dim() { return dim3(gridDim); }
	static dim3 dim_blocks() { return dim3(gridDim); }
	static dim3 block_index() { return dim3(blockIdx); }
	static dim3 thread_index() { return dim3(threadIdx); }
	static bool is_valid() { return cubehip::launch_tls != nullptr && cubehip::launch_tls->coop->sync != nullptr; }
	void sync() const { detail::grid_sync(); }
};
inline grid_group this_grid() { return grid_group(); }

/* A tile of N lanes (a power of two up to warpSize) within a warp. */
template <unsigned N> class thread_block_tile : public thread_group {
	static_assert(N > 0 && (N & (N - 1)) == 0 && N <= CUBEHIP_WARP_SIZE, "tile size: a power of two up to warpSize");
	/* This lane's tile's lanes, as a mask over the warp. */
	static uint64_t lanes() {
		const uint64_t m = N == 64 ? ~0ull : ((1ull << N) - 1);
		return m << (__lane_id() & ~(N - 1));
	}

public:
	thread_block_tile() : thread_group(N) {}
	static constexpr unsigned size() { return N; }
	static constexpr unsigned num_threads() { return N; }
	unsigned thread_rank() const { return detail::block_rank() % N; }
	unsigned meta_group_rank() const { return detail::block_rank() / N; }
	unsigned meta_group_size() const { return (detail::block_size() + N - 1) / N; }
	void sync() const { __syncwarp(); }
	template <class T> T shfl(T v, int src) const { return __shfl(v, src, int(N)); }
	template <class T> T shfl_down(T v, unsigned d) const { return __shfl_down(v, d, int(N)); }
	template <class T> T shfl_up(T v, unsigned d) const { return __shfl_up(v, d, int(N)); }
	template <class T> T shfl_xor(T v, unsigned m) const { return __shfl_xor(v, int(m), int(N)); }
	/* Votes over this tile's lanes; the ballot's bits are tile ranks. */
	unsigned long long ballot(int pred) const {
		const uint64_t b = __ballot(pred) & lanes();
		return b >> (__lane_id() & ~(N - 1));
	}
	bool any(int pred) const { return ballot(pred) != 0; }
	bool all(int pred) const {
		const uint64_t active = __activemask() & lanes();
		return (__ballot(pred) & active) == active;
	}
	template <class T> unsigned long long match_any(T v) const {
		return (__match_any_sync(0, v) & lanes()) >> (__lane_id() & ~(N - 1));
	}
};

template <unsigned N, class Parent> inline thread_block_tile<N> tiled_partition(const Parent&) { return thread_block_tile<N>(); }

/* A group of some lanes of one warp, named by a mask of them: the lanes that reached
 * coalesced_threads() together, or one side of a binary_partition. Ranks count the
 * group's lanes from the lowest; shuffles and votes address them by rank. */
class coalesced_group : public thread_group {
	uint64_t mask_;
	unsigned meta_rank_, meta_size_;
	/* The warp lane of the group's rank r (r < size()). */
	unsigned lane_of(unsigned r) const {
		uint64_t m = mask_;
		for (unsigned k = 0; k < r; k++) m &= m - 1;
		return unsigned(__builtin_ctzll(m));
	}

public:
	explicit coalesced_group(uint64_t mask, unsigned meta_rank = 0, unsigned meta_size = 1)
	    : thread_group(unsigned(__builtin_popcountll(mask))), mask_(mask), meta_rank_(meta_rank), meta_size_(meta_size) {}
	unsigned size() const { return size_; }
	unsigned num_threads() const { return size_; }
	unsigned thread_rank() const { return unsigned(__builtin_popcountll(mask_ & ((1ull << __lane_id()) - 1))); }
	/* The group's place among those its parent was split into: binary_partition makes 2
	 * (rank 1 the lanes whose predicate held) unless every lane went one way; the lanes
	 * of coalesced_threads() are 1 group, rank 0. */
	unsigned meta_group_rank() const { return meta_rank_; }
	unsigned meta_group_size() const { return meta_size_; }
	uint64_t cubehip_mask() const { return mask_; }
	void sync() const { __syncwarp(); }
	template <class T> T shfl(T v, unsigned src_rank) const { return __shfl(v, int(lane_of(src_rank % size_))); }
	template <class T> T shfl_down(T v, unsigned d) const {
		const unsigned r = thread_rank() + d;
		const T u = __shfl(v, int(r < size_ ? lane_of(r) : __lane_id()));
		return r < size_ ? u : v;
	}
	template <class T> T shfl_up(T v, unsigned d) const {
		const unsigned r = thread_rank();
		const T u = __shfl(v, int(r >= d ? lane_of(r - d) : __lane_id()));
		return r >= d ? u : v;
	}
	/* Bit k of a ballot is the group's rank k. */
	unsigned long long ballot(int pred) const {
		const uint64_t b = __ballot(pred) & mask_;
		uint64_t r = 0;
		unsigned k = 0;
		for (uint64_t m = mask_; m != 0; m &= m - 1, k++)
			if (b & (m & -m)) r |= 1ull << k;
		return r;
	}
	bool any(int pred) const { return (__ballot(pred) & mask_) != 0; }
	bool all(int pred) const { return (__ballot(pred) & mask_) == mask_; }
};

/* The lanes of the caller's warp that reach this call together. The fibers group the
 * lanes waiting at any warp function into one collective, so each lane posts its call's
 * site (file and line) and the group is the lanes that posted the same: lanes that took
 * another branch to another call are not in it. */
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
	const uint64_t site = (uint64_t(uintptr_t(file)) << 20 ^ line) | 1;
	return coalesced_group(cubehip::collective(site, [site](uint64_t mask, const uint64_t* val, unsigned) {
		uint64_t r = 0;
		for (unsigned l = 0; l < CUBEHIP_WARP_SIZE; l++)
			if (((mask >> l) & 1) && val[l] == site) r |= 1ull << l;
		return r;
	}));
}

/* Splits a warp-sized or smaller group by a predicate: the caller's side. */
namespace detail {
inline coalesced_group binary_split(uint64_t parent, bool pred) {
	const uint64_t set = __ballot(pred) & parent;
	if (set == parent || set == 0) return coalesced_group(parent, 0, 1);
	return coalesced_group(pred ? set : parent & ~set, pred ? 1 : 0, 2);
}
} // namespace detail
inline coalesced_group binary_partition(const coalesced_group& g, bool pred) { return detail::binary_split(g.cubehip_mask(), pred); }
template <unsigned N> inline coalesced_group binary_partition(const thread_block_tile<N>& g, bool pred) {
	const uint64_t m = N == 64 ? ~0ull : ((1ull << N) - 1);
	return detail::binary_split((m << (__lane_id() & ~(N - 1))) & __activemask(), pred);
}
/* The run-time form: a group of n threads (a power of two up to warpSize, or the block). */
class tiled_group : public thread_group {
public:
	explicit tiled_group(unsigned n) : thread_group(n) {}
};
template <class Parent> inline tiled_group tiled_partition(const Parent&, unsigned n) { return tiled_group(n); }

template <class Group> inline void sync(const Group& g) { g.sync(); }
template <class Group> inline unsigned group_size(const Group& g) { return g.size(); }
template <class Group> inline unsigned thread_rank(const Group& g) { return g.thread_rank(); }

/* cg::reduce with the operators of <cooperative_groups/reduce.h>: a butterfly over the tile. */
template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };
template <unsigned N, class T, class Op> inline T reduce(const thread_block_tile<N>& g, T v, Op op) {
	for (unsigned m = N / 2; m > 0; m /= 2) v = op(v, g.shfl_xor(v, m));
	return v;
}
/* Inclusive and exclusive scans over the tile. */
template <unsigned N, class T, class Op> inline T inclusive_scan(const thread_block_tile<N>& g, T v, Op op) {
	for (unsigned d = 1; d < N; d *= 2) {
		T u = g.shfl_up(v, d);
		if (g.thread_rank() >= d) v = op(v, u);
	}
	return v;
}
template <unsigned N, class T> inline T inclusive_scan(const thread_block_tile<N>& g, T v) { return inclusive_scan(g, v, plus<T>()); }
template <unsigned N, class T> inline T exclusive_scan(const thread_block_tile<N>& g, T v) {
	T inc = inclusive_scan(g, v, plus<T>());
	return inc - v;
}
} // namespace cooperative_groups
