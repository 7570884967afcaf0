/* cubehip_regions.h: barrier kernels run as loops over the block's threads between
 * barriers (regions.go makes them).
 *
 * The jit rewrites the body of an entry it can transform into code that runs once per
 * block (CUBEHIP_REGIONS_BEGIN/END): the statements between two barriers become one loop
 * over the block's threads (CUBEHIP_REGION_BEGIN/END), so a barrier is where one loop ends
 * and the next begins, and costs nothing. Loops and ifs that hold barriers stay as they
 * were, run once per block: their conditions are block-uniform. A local that one region
 * sets and a later one reads lives in a per-thread slot, an array indexed by the thread's
 * linear index (slot); one that only depends on the thread's and block's indices is
 * recomputed in each region instead, which keeps region loops vectorizable. */
#pragma once
#include <cstdlib>

#ifndef CUBEHIP_MAX_SLOTS
#define CUBEHIP_MAX_SLOTS 64
#endif

/* A barrier between two regions (regions.go's barrierText): the checker's hook in a
 * checked module (cubehip_check_shared.h), nothing otherwise. */
#ifdef CUBEHIP_CHECK
#define CUBEHIP_REGION_BARRIER(line, live) ::cubehip::check_region_barrier((line), (live))
#else
#define CUBEHIP_REGION_BARRIER(line, live) ((void)0)
#endif

namespace cubehip {
/* Per-thread slots of the block an OS thread runs: slot i's array, kept and grown across
 * blocks and launches (a block's threads have no values left in it once the block ends),
 * so a block allocates nothing. Plain thread-local storage with no destructor, so the
 * module can still be unloaded; a thread that exits leaves its arrays behind, and the
 * runner's threads live as long as the process. */
struct slot_arrays {
	void* p[CUBEHIP_MAX_SLOTS];
	size_t cap[CUBEHIP_MAX_SLOTS];
};
CUBEHIP_HIDDEN __thread slot_arrays slots_tls;

/* Slot i: room for n values of T and 64 more (a shuffle down reads up to 64 lanes past
 * the end, and keeps its own value there), 64-byte aligned (a vector's loads never split
 * a line). */
template <class T> __attribute__((noinline)) T* slot_grow(unsigned i, unsigned n) {
	slot_arrays* s = &slots_tls;
	const size_t bytes = (sizeof(T) * (size_t(n) + 64) + 63) & ~size_t(63);
	std::free(s->p[i]);
	s->p[i] = std::aligned_alloc(64, bytes);
	if (s->p[i] == nullptr) __builtin_trap(); /* out of memory: nowhere to report it from a kernel */
	s->cap[i] = bytes;
	return static_cast<T*>(s->p[i]);
}
template <class T> inline T* slot(unsigned i, unsigned n) {
	static_assert(alignof(T) <= 64, "a per-thread slot is 64-byte aligned");
	slot_arrays* s = &slots_tls;
	if (__builtin_expect(s->cap[i] >= sizeof(T) * (size_t(n) + 64), 1)) return static_cast<T*>(s->p[i]);
	return slot_grow<T>(i, n);
}

/* Warp shuffles in regions. Each lane posts its value at the end of one region
 * (region_post) and reads a lane's post in the next (region_shfl*): the same answers as
 * cubehip_warp.h's, where a source outside the caller's segment, or a lane past the end
 * of the block, leaves the caller's value. The exchange array has 64 lanes of room on
 * either side, so a shuffle up or down loads its neighbour and the caller's value
 * unconditionally and keeps one: no gather, and the region loop vectorizes.
 *
 * A shuffle down checks its source against the block's end as t < n - d, not t + d < n:
 * the same test, but on the loop's counter against a bound fixed for the region, which
 * GCC splits the loop at (cubehip_entry.h says why), so the lanes below n - d, all of
 * them but the last d, run a vector loop with no check of the end; the others keep their
 * own values. Measured on the 2-core dev VM, one core, the warp-shuffle reduction of 1M
 * floats (docs/benchmarks.md): its kernel about a sixth faster, one vector compare per
 * 16 lanes in each shuffle loop instead of two. */
inline void* exchange(unsigned i, unsigned n) { return reinterpret_cast<char*>(slot<uint64_t>(i, n + 128)) + 64 * 8; }
/* Lane indices are ints: the thread loop's counter is one (each_thread), and GCC follows
 * int arithmetic on it where an unsigned sum might wrap. */
template <class T> inline void region_post(void* x, int t, const T& v) {
	static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffled value is one lane's word");
	static_cast<T*>(x)[t] = v;
}
template <class T> inline T region_lane(const void* xv, int t, int n, int s) {
	const T* x = static_cast<const T*>(xv);
	const int base = t - t % CUBEHIP_WARP_SIZE;
	return s < 0 || s >= CUBEHIP_WARP_SIZE || base + s >= n ? x[t] : x[base + s];
}
template <class T> inline T region_shfl(const void* x, int t, int n, int src, int width) {
	const int l = t % CUBEHIP_WARP_SIZE;
	return region_lane<T>(x, t, n, (l & ~(width - 1)) + (src & (width - 1)));
}
template <class T> inline T region_shfl_xor(const void* x, int t, int n, int mask, int width) {
	const int l = t % CUBEHIP_WARP_SIZE, s = l ^ mask;
	return region_lane<T>(x, t, n, s < ((l + width) & ~(width - 1)) ? s : -1);
}
template <class T> inline T region_shfl_down(const void* xv, int t, int n, unsigned delta, int width) {
	const T* x = static_cast<const T*>(xv);
	const int l = t % CUBEHIP_WARP_SIZE, d = delta < 64 ? int(delta) : 64;
	const T there = x[t + d], here = x[t];
	return (l & (width - 1)) + d < width && t < n - d ? there : here;
}
template <class T> inline T region_shfl_up(const void* xv, int t, int, unsigned delta, int width) {
	const T* x = static_cast<const T*>(xv);
	const int l = t % CUBEHIP_WARP_SIZE, d = delta < 64 ? int(delta) : 64;
	const T there = x[t - d], here = x[t];
	return (l & (width - 1)) >= d ? there : here;
}

/* The same inside an if whose condition is the thread's (regions.go, predicated): act[t]
 * is whether lane t took the branch; a lane that did not takes no part, and a shuffle from
 * it leaves the caller's value, as cubehip_warp.h's collectives of the lanes that reach
 * them do. */
template <class T> inline T region_lane(const void* xv, int t, int n, int s, const unsigned char* act) {
	const T* x = static_cast<const T*>(xv);
	const int base = t - t % CUBEHIP_WARP_SIZE;
	return s < 0 || s >= CUBEHIP_WARP_SIZE || base + s >= n || !act[base + s] ? x[t] : x[base + s];
}
template <class T> inline T region_shfl(const void* x, int t, int n, int src, int width, const unsigned char* act) {
	const int l = t % CUBEHIP_WARP_SIZE;
	return region_lane<T>(x, t, n, (l & ~(width - 1)) + (src & (width - 1)), act);
}
template <class T> inline T region_shfl_xor(const void* x, int t, int n, int mask, int width, const unsigned char* act) {
	const int l = t % CUBEHIP_WARP_SIZE, s = l ^ mask;
	return region_lane<T>(x, t, n, s < ((l + width) & ~(width - 1)) ? s : -1, act);
}
template <class T> inline T region_shfl_down(const void* xv, int t, int n, unsigned delta, int width, const unsigned char* act) {
	const T* x = static_cast<const T*>(xv);
	const int l = t % CUBEHIP_WARP_SIZE, d = delta < 64 ? int(delta) : 64;
	const T there = x[t + d], here = x[t];
	return (l & (width - 1)) + d < width && t < n - d && act[t + d] ? there : here;
}
template <class T> inline T region_shfl_up(const void* xv, int t, int, unsigned delta, int width, const unsigned char* act) {
	const T* x = static_cast<const T*>(xv);
	const int l = t % CUBEHIP_WARP_SIZE, d = delta < 64 ? int(delta) : 64;
	const T there = x[t - d], here = x[t];
	return (l & (width - 1)) >= d && act[t - d] ? there : here;
}

/* Atomics on a block's __shared__ memory from a region: the block's threads run one after
 * another on one OS thread, so nothing races with the update (regions.go rewrites the
 * calls). Same results and return values as cubehip_atomic.h's. */
namespace plain {
template <class T, class U> inline T atomicAdd(T* p, U v) {
	const T o = *p;
	*p = T(o + T(v));
	return o;
}
template <class T, class U> inline T atomicSub(T* p, U v) {
	const T o = *p;
	*p = T(o - T(v));
	return o;
}
template <class T, class U> inline T atomicMax(T* p, U v) {
	const T o = *p;
	if (o < T(v)) *p = T(v);
	return o;
}
template <class T, class U> inline T atomicMin(T* p, U v) {
	const T o = *p;
	if (T(v) < o) *p = T(v);
	return o;
}
template <class T, class U> inline T atomicExch(T* p, U v) {
	const T o = *p;
	*p = T(v);
	return o;
}
template <class T, class U> inline T atomicAnd(T* p, U v) {
	const T o = *p;
	*p = T(o & T(v));
	return o;
}
template <class T, class U> inline T atomicOr(T* p, U v) {
	const T o = *p;
	*p = T(o | T(v));
	return o;
}
template <class T, class U> inline T atomicXor(T* p, U v) {
	const T o = *p;
	*p = T(o ^ T(v));
	return o;
}
template <class T, class U, class V> inline T atomicCAS(T* p, U cmp, V v) {
	const T o = *p;
	if (o == T(cmp)) *p = T(v);
	return o;
}
template <class U> inline unsigned atomicInc(unsigned* p, U lim) {
	const unsigned o = *p;
	*p = o >= unsigned(lim) ? 0u : o + 1;
	return o;
}
template <class U> inline unsigned atomicDec(unsigned* p, U lim) {
	const unsigned o = *p;
	*p = (o == 0 || o > unsigned(lim)) ? unsigned(lim) : o - 1;
	return o;
}
} // namespace plain

/* p, as a value the compiler cannot trace back to where it came from: a thread-local's
 * address taken once stays in a register instead of being looked up at every use. */
template <class T> __attribute__((always_inline)) inline T* opaque(T* p) {
	asm("" : "+r"(p));
	return p;
}

/* Runs a region body (a closure taking blockIdx) once per block of c. */
template <class F> __attribute__((always_inline)) inline void run_regions(const F& body, const block_ctx c) {
	each_block(c, [&](uint3 bid) {
		F f = body;
		f(bid);
	});
}
} // namespace cubehip

/* The body of a transformed entry: blockDim, gridDim and the block's thread count as
 * locals, then the per-thread slots (taken once per range of blocks), then
 * CUBEHIP_REGIONS_BODY opens a closure run once per block. */
#define CUBEHIP_REGIONS_BEGIN                                                                   \
	{                                                                                           \
		const ::cubehip::block_ctx* __cubehip_b = ::cubehip::block();                          \
		[[maybe_unused]] const uint3 blockDim = __cubehip_b->bdim, gridDim = __cubehip_b->gdim; \
		[[maybe_unused]] const unsigned __cubehip_n = blockDim.x * blockDim.y * blockDim.z;
#define CUBEHIP_REGIONS_BODY const auto __cubehip_body = [=]([[maybe_unused]] const uint3 blockIdx) mutable -> void {
#define CUBEHIP_REGIONS_END                              \
	}                                                    \
	;                                                    \
	::cubehip::run_regions(__cubehip_body, *__cubehip_b); \
	}

/* Runs f(threadIdx, t) for each thread of a block in linear order (x fastest), t its
 * linear index. GCC (12) vectorizes a region's loop only through indices it can prove
 * affine in the loop's counter (an unsigned sum that may wrap is not), and splits a loop
 * at `if (t < k)` only on its own signed counter. So a one-dimensional block, the common
 * case, loops over an int x, which `int t = threadIdx.x` is; the bounds on the block's
 * size tell GCC that t + k cannot wrap for a small k; and where the block's first global
 * index plus its size fits in an int, the loop runs under that condition, whose range
 * GCC carries to the usual `blockIdx.x * blockDim.x + t` (the same product, computed
 * once): no wrap there either. Other blocks take the nested loops. Looping over the global
 * index instead folds it but no longer splits, several times slower (docs/benchmarks.md,
 * "cpu device: one-dimensional blocks over an int"). */
namespace cubehip {
template <class F> __attribute__((always_inline)) inline void each_thread(const uint3 bid, const uint3 bdim, const F& f) {
	if (bdim.x > CUBEHIP_MAX_THREADS || bdim.y > CUBEHIP_MAX_THREADS || bdim.z > 64) __builtin_unreachable();
	const unsigned base = bid.x * bdim.x;
	if (bdim.y == 1 && bdim.z == 1 && base <= unsigned(INT_MAX) - bdim.x) {
		for (int x = 0; x < int(bdim.x); x++) f(uint3{unsigned(x), 0, 0}, x);
		return;
	}
	int t = 0;
	for (unsigned z = 0; z < bdim.z; z++)
		for (unsigned y = 0; y < bdim.y; y++)
			for (unsigned x = 0; x < bdim.x; x++, t++) f(uint3{x, y, z}, t);
}

/* each_thread for a region that only thread first (step 0), or threads first, first +
 * step, ... (step > 0) can act in, by their x index: in a one-dimensional block only
 * those run; otherwise, or for a step below 0, every thread does (regions.go, narrow). */
template <class F> __attribute__((always_inline)) inline void each_thread_from(const uint3 bid, const uint3 bdim, long long first, long long step, const F& f) {
	if (bdim.y == 1 && bdim.z == 1 && step >= 0 && !(first == 0 && step == 1)) {
		if (step == 0) {
			if (first >= 0 && first < (long long)bdim.x) f(uint3{unsigned(first), 0, 0}, int(first));
			return;
		}
		for (long long x = first; x < (long long)bdim.x; x += step)
			if (x >= 0) f(uint3{unsigned(x), 0, 0}, int(x));
		return;
	}
	each_thread(bid, bdim, f);
}
} // namespace cubehip

/* One region: a closure run for each thread of the block, with its threadIdx and linear
 * index __cubehip_t; `return` in it ends the thread's part of the region. */
#define CUBEHIP_REGION_BEGIN CUBEHIP_REGION_FROM(0, 1)
/* A region only threads first, first + step, ... act in (each_thread_from). */
#define CUBEHIP_REGION_FROM(first, step)                                                                              \
	{                                                                                                                 \
		const long long __cubehip_first = (first), __cubehip_step = (step);                                          \
		[[maybe_unused]] uint3* const __cubehip_tslot = CUBEHIP_TLS_BUILTINS ? ::cubehip::thread_slot() : nullptr;   \
		const auto __cubehip_region = [&]([[maybe_unused]] const uint3 threadIdx, [[maybe_unused]] const int __cubehip_t) \
		                                  __attribute__((always_inline)) -> void {                                    \
			if constexpr (CUBEHIP_TLS_BUILTINS) ::cubehip::store_index(__cubehip_tslot, threadIdx);
#define CUBEHIP_REGION_END                                   \
	}                                                        \
	;                                                        \
	::cubehip::each_thread_from(blockIdx, blockDim, __cubehip_first, __cubehip_step, __cubehip_region); \
	}
