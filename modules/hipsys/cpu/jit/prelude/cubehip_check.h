/* cubehip_check.h: the kernel checker's side in a checked module (-DCUBEHIP_CHECK=bits;
 * check.go). The module is compiled with GCC's -fsanitize=kernel-address and a call
 * threshold of 0, so every load and store the compiler emits calls one of the
 * __asan_{load,store}{1,2,4,8,16,N}_noabort functions below with its address (kernel
 * AddressSanitizer's interface, which needs no runtime library: the callbacks are ours).
 * Each access is checked against the launch's table of device memory (cubehip_check_ctx,
 * set by the jit before a checked launch and cleared after it); what is wrong is written
 * into the context's report array, with the thread and the return address, which the jit
 * turns into the source line.
 *
 * Invariants:
 *  - An address outside [lo, hi) of the table is not device memory (a stack, the runtime's
 *    own state, a module variable) and is never reported: memcheck judges device memory
 *    only, and the test of lo and hi is all an unchecked address costs.
 *  - Regions are sorted by lo and do not overlap; each is [lo, hi) = the allocation with its
 *    redzones (memory the device reserved around it and no buffer owns), so an access that
 *    runs off a buffer's end, or starts before it, lands in its own region, never a
 *    neighbour's.
 *  - The callbacks are never instrumented themselves (no_sanitize), and only read the
 *    table: concurrent blocks share it without a lock; reports are claimed with one atomic
 *    add, and past the cap only counted.
 *  - Barriers (synccheck) are judged once per barrier generation, by the OS thread that
 *    runs the block: no other thread touches the block's records. */
#pragma once

#define CUBEHIP_NO_CHECK __attribute__((no_sanitize_address, noinline))

extern "C" {
typedef struct cubehip_check_region {
	uint64_t lo, base, size, hi; /* [lo, hi) reserved; [base, base+size) the buffer */
	int32_t param;               /* the first kernel parameter pointing into the buffer, -1 none */
	uint32_t freed;              /* released: any access is a use after release */
	unsigned char* init;         /* initcheck: a byte per byte of the buffer, nonzero once written; null unchecked */
} cubehip_check_region;

enum {
	CUBEHIP_CHECK_OOB = 1,
	CUBEHIP_CHECK_FREED = 2,
	CUBEHIP_CHECK_MISALIGNED = 3,
	CUBEHIP_CHECK_UNINIT = 4,
	CUBEHIP_CHECK_DIVERGENT = 5,
	CUBEHIP_CHECK_EXITED = 6,
};

typedef struct cubehip_check_report {
	uint64_t addr, pc, pc2;
	uint32_t kind, size, write;
	int32_t region;
	uint32_t block[3], thread[3], thread2[3];
} cubehip_check_report;

typedef struct cubehip_check_ctx {
	const cubehip_check_region* regions;
	uint32_t n, checks;
	uint64_t lo, hi;
	cubehip_check_report* reports;
	uint32_t cap;
	uint32_t count; /* reports seen, atomically; the first cap are in reports */
} cubehip_check_ctx;
}

namespace cubehip {
CUBEHIP_HIDDEN cubehip_check_ctx* check_ctx;

CUBEHIP_NO_CHECK inline cubehip_check_report* check_claim(cubehip_check_ctx* c) {
	const uint32_t i = __atomic_fetch_add(&c->count, 1, __ATOMIC_RELAXED);
	if (i >= c->cap) return nullptr;
	cubehip_check_report* r = &c->reports[i];
	r->block[0] = ::blockIdx.x, r->block[1] = ::blockIdx.y, r->block[2] = ::blockIdx.z;
	r->thread[0] = ::threadIdx.x, r->thread[1] = ::threadIdx.y, r->thread[2] = ::threadIdx.z;
	return r;
}

CUBEHIP_NO_CHECK inline void check_access(uint64_t a, uint32_t n, uint32_t write, void* pc) {
	cubehip_check_ctx* c = check_ctx;
	if (c == nullptr || a < c->lo || a >= c->hi) return;
	/* The last region starting at or below a. */
	uint32_t lo = 0, hi = c->n;
	while (hi - lo > 1) {
		const uint32_t mid = (lo + hi) / 2;
		if (c->regions[mid].lo <= a) lo = mid;
		else hi = mid;
	}
	const cubehip_check_region* r = &c->regions[lo];
	if (a < r->lo || a >= r->hi) return;
	uint32_t kind = 0;
	if (r->freed) kind = CUBEHIP_CHECK_FREED;
	else if (a < r->base || a + n > r->base + r->size) kind = CUBEHIP_CHECK_OOB;
	else if (n > 1 && n <= 16 && (n & (n - 1)) == 0 && (a & (n - 1)) != 0) kind = CUBEHIP_CHECK_MISALIGNED;
	if (kind == 0 && r->init != nullptr) {
		/* initcheck: a store initializes its bytes; a load must find each written. */
		unsigned char* sh = r->init + (a - r->base);
		if (write) {
			for (uint32_t k = 0; k < n; k++) sh[k] = 1;
		} else if (c->checks & 2u) {
			for (uint32_t k = 0; k < n; k++)
				if (sh[k] == 0) {
					kind = CUBEHIP_CHECK_UNINIT;
					break;
				}
		}
	}
	if (kind == 0) return;
	cubehip_check_report* rep = check_claim(c);
	if (rep == nullptr) return;
	rep->kind = kind, rep->addr = a, rep->size = n, rep->write = write;
	rep->region = int32_t(lo), rep->pc = uint64_t(pc), rep->pc2 = 0;
}

/* synccheck: the source line of the barrier each thread of the running block waits at in
 * this barrier generation (0: none; unknown_line: a barrier reached other than through
 * __syncthreads & co., a cooperative group's sync), and whether it returned during it.
 * check_line is the line of the __syncthreads being called: the macros at the end of the
 * prelude set it, since a return address inside an inlined wrapper names the wrapper's
 * line, not the kernel's. */
CUBEHIP_HIDDEN __thread unsigned check_site[CUBEHIP_MAX_THREADS];
CUBEHIP_HIDDEN __thread unsigned char check_exited[CUBEHIP_MAX_THREADS];
CUBEHIP_HIDDEN __thread unsigned check_line;
constexpr unsigned unknown_line = ~0u;

CUBEHIP_NO_CHECK inline int check_mark(unsigned line) {
	check_line = line;
	return 0;
}
CUBEHIP_NO_CHECK inline void check_barrier(unsigned t) {
	if (check_ctx != nullptr && (check_ctx->checks & 4u)) check_site[t] = check_line ? check_line : unknown_line;
	check_line = 0;
}
CUBEHIP_NO_CHECK inline void check_exit(unsigned t) {
	if (check_ctx != nullptr && (check_ctx->checks & 4u)) check_exited[t] = 1;
}
/* One barrier generation of the block's n threads (idx their indices) is over: every
 * thread that waits must wait at the same barrier, and none may have returned meanwhile. */
CUBEHIP_NO_CHECK inline void check_generation(unsigned n, const uint3* idx) {
	cubehip_check_ctx* c = check_ctx;
	if (c == nullptr || !(c->checks & 4u)) return;
	unsigned first = n, exited = n;
	for (unsigned t = 0; t < n; t++) {
		if (check_site[t] != 0 && first == n) first = t;
		if (check_exited[t] && exited == n) exited = t;
	}
	if (first < n) {
		unsigned other = n;
		uint32_t kind = 0;
		for (unsigned t = first + 1; t < n && other == n; t++)
			if (check_site[t] != 0 && check_site[t] != check_site[first]) other = t, kind = CUBEHIP_CHECK_DIVERGENT;
		if (other == n && exited < n) other = exited, kind = CUBEHIP_CHECK_EXITED;
		if (kind != 0) {
			const uint3 saved = ::threadIdx;
			::threadIdx = idx[first];
			cubehip_check_report* rep = check_claim(c);
			::threadIdx = saved;
			if (rep != nullptr) {
				rep->kind = kind, rep->addr = 0, rep->size = 0, rep->write = 0, rep->region = -1;
				/* Lines, not addresses, for a barrier's report. */
				rep->pc = check_site[first] == unknown_line ? 0 : check_site[first];
				rep->pc2 = kind == CUBEHIP_CHECK_DIVERGENT && check_site[other] != unknown_line ? check_site[other] : 0;
				rep->thread2[0] = idx[other].x, rep->thread2[1] = idx[other].y, rep->thread2[2] = idx[other].z;
			}
		}
	}
	for (unsigned t = 0; t < n; t++) check_site[t] = 0, check_exited[t] = 0;
}
} // namespace cubehip

extern "C" {
/* The jit's handle on the module's context: set before a checked launch, cleared after. */
__attribute__((visibility("default"))) CUBEHIP_NO_CHECK void cubehip_check_set(cubehip_check_ctx* c) { cubehip::check_ctx = c; }

#define CUBEHIP_CHECK_FN(kind, n, w)                                                                    \
	CUBEHIP_HIDDEN CUBEHIP_NO_CHECK void __asan_##kind##n##_noabort(uintptr_t a) {                      \
		cubehip::check_access(a, n, w, __builtin_return_address(0));                                \
	}
CUBEHIP_CHECK_FN(load, 1, 0)
CUBEHIP_CHECK_FN(load, 2, 0)
CUBEHIP_CHECK_FN(load, 4, 0)
CUBEHIP_CHECK_FN(load, 8, 0)
CUBEHIP_CHECK_FN(load, 16, 0)
CUBEHIP_CHECK_FN(store, 1, 1)
CUBEHIP_CHECK_FN(store, 2, 1)
CUBEHIP_CHECK_FN(store, 4, 1)
CUBEHIP_CHECK_FN(store, 8, 1)
CUBEHIP_CHECK_FN(store, 16, 1)
#undef CUBEHIP_CHECK_FN
CUBEHIP_HIDDEN CUBEHIP_NO_CHECK void __asan_loadN_noabort(uintptr_t a, size_t n) {
	cubehip::check_access(a, uint32_t(n), 0, __builtin_return_address(0));
}
CUBEHIP_HIDDEN CUBEHIP_NO_CHECK void __asan_storeN_noabort(uintptr_t a, size_t n) {
	cubehip::check_access(a, uint32_t(n), 1, __builtin_return_address(0));
}
CUBEHIP_HIDDEN CUBEHIP_NO_CHECK void __asan_handle_no_return(void) {}
/* AddressSanitizer's dynamic-initialization order checks (the shared arena's static
 * members have dynamic initializers): nothing to check here. */
CUBEHIP_HIDDEN CUBEHIP_NO_CHECK void __asan_before_dynamic_init(const char*) {}
CUBEHIP_HIDDEN CUBEHIP_NO_CHECK void __asan_after_dynamic_init(void) {}
}
