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

/* Slot i: room for n values of T, 64-byte aligned (a vector's loads never split a line). */
template <class T> __attribute__((noinline)) T* slot_grow(unsigned i, unsigned n) {
	slot_arrays* s = &slots_tls;
	const size_t bytes = (sizeof(T) * size_t(n) + 63) & ~size_t(63);
	std::free(s->p[i]);
	s->p[i] = std::aligned_alloc(64, bytes);
	if (s->p[i] == nullptr) __builtin_trap(); /* out of memory: nowhere to report it from a kernel */
	s->cap[i] = bytes;
	return static_cast<T*>(s->p[i]);
}
template <class T> inline T* slot(unsigned i, unsigned n) {
	static_assert(alignof(T) <= 64, "a per-thread slot is 64-byte aligned");
	slot_arrays* s = &slots_tls;
	if (__builtin_expect(s->cap[i] >= sizeof(T) * size_t(n), 1)) return static_cast<T*>(s->p[i]);
	return slot_grow<T>(i, n);
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

/* Runs a region body (a closure taking blockIdx) once per block of c. */
template <class F> __attribute__((always_inline)) inline void run_regions(const F& body, const block_ctx c) {
	each_block(c, [&](uint3 bid) {
		F f = body;
		f(bid);
	});
}
} // namespace cubehip

/* The body of a transformed entry: a lambda run once per block, with blockDim, gridDim and
 * the block's thread count as locals. */
#define CUBEHIP_REGIONS_BEGIN                                                                   \
	{                                                                                           \
		const ::cubehip::block_ctx* __cubehip_b = ::cubehip::block();                          \
		[[maybe_unused]] const uint3 blockDim = __cubehip_b->bdim, gridDim = __cubehip_b->gdim; \
		const auto __cubehip_body = [=]([[maybe_unused]] const uint3 blockIdx) mutable -> void { \
			[[maybe_unused]] const unsigned __cubehip_n = blockDim.x * blockDim.y * blockDim.z;
#define CUBEHIP_REGIONS_END                              \
	}                                                    \
	;                                                    \
	::cubehip::run_regions(__cubehip_body, *__cubehip_b); \
	}

/* One region: the loop over the block's threads in linear order (x fastest), each with its
 * threadIdx and linear index __cubehip_t. */
#define CUBEHIP_REGION_BEGIN                                                                              \
	for (unsigned __cubehip_z = 0, __cubehip_t = 0; __cubehip_z < blockDim.z; __cubehip_z++)              \
		for (unsigned __cubehip_y = 0; __cubehip_y < blockDim.y; __cubehip_y++)                           \
			for (unsigned __cubehip_x = 0; __cubehip_x < blockDim.x; __cubehip_x++, __cubehip_t++) {      \
				[[maybe_unused]] const uint3 threadIdx{__cubehip_x, __cubehip_y, __cubehip_z};           \
				if constexpr (CUBEHIP_TLS_BUILTINS) ::threadIdx = threadIdx;
#define CUBEHIP_REGION_END }
