/* cubehip_check.h: the kernel checker's side in a checked module (-DCUBEHIP_CHECK=bits;
 * check.go). Under racecheck the module is compiled with GCC's -fsanitize=thread (function
 * entries left alone) and linked without its runtime, so every load and store the
 * compiler emits calls one of the __tsan_{read,write}{1,2,4,8,16} functions below with its
 * address, and every atomic builtin one of the __tsan_atomic functions: ThreadSanitizer's
 * interface, whose runtime is these functions. (AddressSanitizer's merges a store into the
 * load before it at one address, which racecheck cannot have: a read-modify-write of
 * shared memory is exactly the access a race is made of.)
 * Without racecheck, memcheck and initcheck are compiled with AddressSanitizer's inline
 * shadow check instead (-DCUBEHIP_CHECK_SHADOW, jit/shadow.go): a kernel calls the
 * __asan_report functions below only for an access whose shadow is poisoned, and the
 * alignment sanitizer's handler (memcheck) only for a misaligned one; both ask the same
 * judge. A store merged into its load is then not seen: initcheck marks what a
 * read-modify-write of unwritten memory stores no more than it did (the read is
 * reported).
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
 *    runs the block: no other thread touches the block's records.
 *  - A block's shared memory is judged apart (cubehip_check_shared.h): an address within a
 *    megabyte of the OS thread's shared arena is a shared access, whatever the table
 *    says; its records (who wrote and read each byte in which barrier generation, and
 *    whether the block wrote it) are the OS thread's, which runs one block at a time.
 *  - An atomic is one access (its __tsan_atomic callback): checked once, never a race
 *    with another.
 *  - Inline (CUBEHIP_CHECK_SHADOW): the shadow only says when to ask check_access, which
 *    judges from the table alone; the shared arena's shadow is poisoned outside the
 *    block's windows (check_arena) whenever the OS thread's windows change, before any
 *    block with them runs. */
#pragma once

/* The checker's own code is never instrumented, whichever instrumentation the module has;
 * a judge's entry stays a call (the kernel's code stays small), and what it calls on every
 * access is inlined into it (CUBEHIP_UNCHECKED). */
#define CUBEHIP_UNCHECKED __attribute__((no_sanitize("thread", "address", "kernel-address", "alignment")))
#define CUBEHIP_NO_CHECK __attribute__((no_sanitize("thread", "address", "kernel-address", "alignment"), noinline))

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
	CUBEHIP_CHECK_SHARED_OOB = 7,
	CUBEHIP_CHECK_RACE_RAW = 8,  /* read of what another thread wrote in the same generation */
	CUBEHIP_CHECK_RACE_WAR = 9,  /* write of what another thread read in the same generation */
	CUBEHIP_CHECK_RACE_WAW = 10, /* write of what another thread wrote in the same generation */
	CUBEHIP_CHECK_SHARED_UNINIT = 11,
	CUBEHIP_CHECK_LOCAL_OOB = 12, /* a local array's redzone (inline memcheck) */
};

typedef struct cubehip_check_report {
	uint64_t addr, pc, pc2;
	uint32_t kind, size, write;
	int32_t region;
	uint32_t block[3], thread[3], thread2[3];
	const char* name; /* a shared access: the variable ("" the dynamic buffer) */
	int64_t name_off; /* and the offset into it */
} cubehip_check_report;

typedef struct cubehip_check_ctx {
	const cubehip_check_region* regions;
	uint32_t n, checks;
	uint64_t lo, hi;
	cubehip_check_report* reports;
	uint32_t cap;
	uint32_t count;  /* reports seen, atomically; the first cap are in reports */
	uint64_t serial; /* the launch's number: a block's shared records start afresh */
	/* Every shared arena's mapping lies in [*arena_min, *arena_max) (the runner's; they
	 * only widen): an address outside is no block's shared memory, known without the
	 * thread-local lookup of the running block's arena. */
	const uint64_t *arena_min, *arena_max;
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

/* The shared-memory side (cubehip_check_shared.h, at the end of the prelude). */
CUBEHIP_UNCHECKED inline bool check_shared(cubehip_check_ctx* c, uint64_t a, uint32_t n, uint32_t write, void* pc, bool atomic);
/* The shared arena's shadow for a block's windows (inline memcheck; cubehip_check_shared.h). */
CUBEHIP_NO_CHECK inline void check_arena(const cubehip_arena* a);
/* A block's start: its shared records, and initcheck's shared windows (cubehip_check_shared.h). */
CUBEHIP_NO_CHECK inline void check_block();

#ifdef CUBEHIP_CHECK_SHADOW
/* Whether any byte of [a, a+n) is poisoned in the inline shadow (jit/shadow.go's
 * encoding): the outlined checks' test, which the inline ones make per granule. */
CUBEHIP_NO_CHECK inline bool shadow_poisoned(uint64_t a, uint64_t n) {
	for (uint64_t g = a & ~uint64_t(7); g < a + n; g += 8) {
		const signed char v = *reinterpret_cast<const signed char*>((g >> 3) + CUBEHIP_CHECK_SHADOW);
		if (v == 0) continue;
		/* The granule's first v bytes are addressable: the access's last byte in it must be among them. */
		const uint64_t end = a + n < g + 8 ? a + n : g + 8;
		if (v < 0 || end - 1 - g >= uint64_t(v)) return true;
	}
	return false;
}
#endif

#ifdef CUBEHIP_CHECK_SHADOW
/* Unpoisons the granules [a, a+n) touches of the buffer [base, base+size) whose buffer
 * bytes init (a byte per byte of it) now says are all written: initcheck's poison, lifted
 * granule by granule as the kernel writes (jit/shadow.go's MarkWritten for host copies). */
CUBEHIP_NO_CHECK inline void shadow_written(uint64_t base, uint64_t size, const unsigned char* init, uint64_t a, uint64_t n) {
	const uint64_t end = base + size;
	for (uint64_t g = a & ~uint64_t(7); g < a + n; g += 8) {
		const uint64_t b0 = g < base ? base : g, b1 = g + 8 < end ? g + 8 : end;
		bool all = true;
		for (uint64_t b = b0; b < b1 && all; b++) all = init[b - base] != 0;
		if (all) *reinterpret_cast<unsigned char*>((g >> 3) + CUBEHIP_CHECK_SHADOW) = g + 8 <= end ? 0 : (unsigned char)(end - g);
	}
}
#endif

/* An access outside device memory: shared memory's (cubehip_check_shared.h), else, under
 * inline memcheck, a local array's redzone, which the kernel's own frames mark
 * (AddressSanitizer's stack magics: left, middle and right of a frame's variables, and a
 * variable out of scope). */
CUBEHIP_UNCHECKED inline void check_other(cubehip_check_ctx* c, uint64_t a, uint32_t n, uint32_t write, void* pc, bool atomic) {
	if (check_shared(c, a, n, write, pc, atomic)) return;
#ifdef CUBEHIP_CHECK_SHADOW
	if (!(c->checks & 1u)) return;
	bool local = false;
	for (uint64_t g = a & ~uint64_t(7); g < a + n && !local; g += 8) {
		const unsigned char v = *reinterpret_cast<const unsigned char*>((g >> 3) + CUBEHIP_CHECK_SHADOW);
		local = v == 0xf1 || v == 0xf2 || v == 0xf3 || v == 0xf5 || v == 0xf8;
	}
	if (!local) return;
	cubehip_check_report* rep = check_claim(c);
	if (rep == nullptr) return;
	rep->kind = CUBEHIP_CHECK_LOCAL_OOB, rep->addr = a, rep->size = n, rep->write = write;
	rep->region = -1, rep->pc = uint64_t(pc), rep->pc2 = 0, rep->name = nullptr, rep->name_off = 0;
#endif
}

CUBEHIP_NO_CHECK inline void check_access(uint64_t a, uint32_t n, uint32_t write, void* pc, bool atomic = false) {
	cubehip_check_ctx* c = check_ctx;
	if (c == nullptr) return;
	/* Device memory first, from the table alone: the shared side needs the block's
	 * context, a thread-local, which costs a call on every access. */
	if (a < c->lo || a >= c->hi) {
		check_other(c, a, n, write, pc, atomic);
		return;
	}
	/* The last region starting at or below a. */
	uint32_t lo = 0, hi = c->n;
	while (hi - lo > 1) {
		const uint32_t mid = (lo + hi) / 2;
		if (c->regions[mid].lo <= a) lo = mid;
		else hi = mid;
	}
	const cubehip_check_region* r = &c->regions[lo];
	if (a < r->lo || a >= r->hi) {
		check_other(c, a, n, write, pc, atomic);
		return;
	}
	uint32_t kind = 0;
	if (r->freed) kind = CUBEHIP_CHECK_FREED;
	else if (a < r->base || a + n > r->base + r->size) kind = CUBEHIP_CHECK_OOB;
	else if (n > 1 && n <= 16 && (n & (n - 1)) == 0 && (a & (n - 1)) != 0) kind = CUBEHIP_CHECK_MISALIGNED;
	if (kind == 0 && r->init != nullptr) {
		/* initcheck: a store initializes its bytes; a load must find each written (an
		 * atomic does both: it reads first). */
		unsigned char* sh = r->init + (a - r->base);
		if ((!write || atomic) && (c->checks & 2u)) {
			for (uint32_t k = 0; k < n; k++)
				if (sh[k] == 0) {
					kind = CUBEHIP_CHECK_UNINIT;
					break;
				}
		}
		if (write) {
			for (uint32_t k = 0; k < n; k++) sh[k] = 1;
#ifdef CUBEHIP_CHECK_SHADOW
			shadow_written(r->base, r->size, r->init, a, n);
#endif
		}
	}
	if (kind == 0) return;
	cubehip_check_report* rep = check_claim(c);
	if (rep == nullptr) return;
	rep->kind = kind, rep->addr = a, rep->size = n, rep->write = write;
	rep->region = int32_t(lo), rep->pc = uint64_t(pc), rep->pc2 = 0, rep->name = nullptr, rep->name_off = 0;
}
}
namespace cubehip {

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
				rep->kind = kind, rep->addr = 0, rep->size = 0, rep->write = 0, rep->region = -1, rep->name = nullptr;
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

#ifdef CUBEHIP_CHECK_SHADOW
/* AddressSanitizer's report functions, in the kernel-address form GCC emits with recovery:
 * called with the address (and the size where it is not 1 to 16) of an access whose
 * shadow is poisoned; the access then goes on, as it does on a GPU under a sanitizer. */
#define CUBEHIP_ASAN_FN(n)                                                                                               \
	CUBEHIP_NO_CHECK void __asan_report_load##n##_noabort(void* a) { cubehip::check_access(uint64_t(a), n, 0, __builtin_return_address(0)); } \
	CUBEHIP_NO_CHECK void __asan_report_store##n##_noabort(void* a) { cubehip::check_access(uint64_t(a), n, 1, __builtin_return_address(0)); } \
	CUBEHIP_NO_CHECK void __asan_load##n##_noabort(void* a) {                                                         \
		if (cubehip::shadow_poisoned(uint64_t(a), n)) cubehip::check_access(uint64_t(a), n, 0, __builtin_return_address(0)); \
	}                                                                                                                \
	CUBEHIP_NO_CHECK void __asan_store##n##_noabort(void* a) {                                                        \
		if (cubehip::shadow_poisoned(uint64_t(a), n)) cubehip::check_access(uint64_t(a), n, 1, __builtin_return_address(0)); \
	}
CUBEHIP_ASAN_FN(1)
CUBEHIP_ASAN_FN(2)
CUBEHIP_ASAN_FN(4)
CUBEHIP_ASAN_FN(8)
CUBEHIP_ASAN_FN(16)
#undef CUBEHIP_ASAN_FN
CUBEHIP_NO_CHECK void __asan_report_load_n_noabort(void* a, size_t n) { cubehip::check_access(uint64_t(a), uint32_t(n), 0, __builtin_return_address(0)); }
CUBEHIP_NO_CHECK void __asan_report_store_n_noabort(void* a, size_t n) { cubehip::check_access(uint64_t(a), uint32_t(n), 1, __builtin_return_address(0)); }
CUBEHIP_NO_CHECK void __asan_loadN_noabort(void* a, size_t n) {
	if (cubehip::shadow_poisoned(uint64_t(a), n)) cubehip::check_access(uint64_t(a), uint32_t(n), 0, __builtin_return_address(0));
}
CUBEHIP_NO_CHECK void __asan_storeN_noabort(void* a, size_t n) {
	if (cubehip::shadow_poisoned(uint64_t(a), n)) cubehip::check_access(uint64_t(a), uint32_t(n), 1, __builtin_return_address(0));
}
/* Before a call that never returns: AddressSanitizer's runtime unpoisons the stack here,
 * which this one never poisons. */
CUBEHIP_NO_CHECK void __asan_handle_no_return(void) {}
/* Around a module's dynamic initializers: AddressSanitizer's runtime checks their order
 * across modules there, which globals' redzones (not made here) would need. */
CUBEHIP_NO_CHECK void __asan_before_dynamic_init(const char*) {}
CUBEHIP_NO_CHECK void __asan_after_dynamic_init(void) {}

/* The alignment sanitizer's handler (its recoverable form): p is misaligned for the type
 * the kernel reads or writes through it. A GPU faults on it where p is device memory,
 * which the judge decides. */
typedef struct cubehip_ubsan_mismatch {
	const char* file;
	uint32_t line, column;
	const void* type;
	unsigned char log_alignment;
	unsigned char kind; /* 0 a load, 1 a store, others a member access or a call */
} cubehip_ubsan_mismatch;
CUBEHIP_NO_CHECK void __ubsan_handle_type_mismatch_v1(void* data, void* p) {
	const cubehip_ubsan_mismatch* m = static_cast<const cubehip_ubsan_mismatch*>(data);
	const uint64_t align = uint64_t(1) << m->log_alignment;
	if (p == nullptr || (uint64_t(p) & (align - 1)) == 0 || align > 16) return;
	cubehip::check_access(uint64_t(p), uint32_t(align), m->kind == 1, __builtin_return_address(0));
}
#else
/* ThreadSanitizer's instrumentation interface, which GCC emits for every load and store
 * (reads and writes apart, none merged into another, unlike AddressSanitizer's) and for
 * every atomic builtin; the runtime is ours, these functions. */
#define CUBEHIP_CHECK_FN(kind, n, w)                                                                    \
	CUBEHIP_NO_CHECK void __tsan_##kind##n(void* a) { cubehip::check_access(uint64_t(a), n, w, __builtin_return_address(0)); } \
	CUBEHIP_NO_CHECK void __tsan_unaligned_##kind##n(void* a) { cubehip::check_access(uint64_t(a), n, w, __builtin_return_address(0)); }
CUBEHIP_CHECK_FN(read, 1, 0)
CUBEHIP_CHECK_FN(read, 2, 0)
CUBEHIP_CHECK_FN(read, 4, 0)
CUBEHIP_CHECK_FN(read, 8, 0)
CUBEHIP_CHECK_FN(read, 16, 0)
CUBEHIP_CHECK_FN(write, 1, 1)
CUBEHIP_CHECK_FN(write, 2, 1)
CUBEHIP_CHECK_FN(write, 4, 1)
CUBEHIP_CHECK_FN(write, 8, 1)
CUBEHIP_CHECK_FN(write, 16, 1)
#undef CUBEHIP_CHECK_FN
CUBEHIP_NO_CHECK void __tsan_read_range(void* a, unsigned long n) { cubehip::check_access(uint64_t(a), uint32_t(n), 0, __builtin_return_address(0)); }
CUBEHIP_NO_CHECK void __tsan_write_range(void* a, unsigned long n) { cubehip::check_access(uint64_t(a), uint32_t(n), 1, __builtin_return_address(0)); }
CUBEHIP_NO_CHECK void __tsan_vptr_update(void**, void*) {}
CUBEHIP_NO_CHECK void __tsan_vptr_read(void**) {}
CUBEHIP_NO_CHECK void __tsan_init(void) {}
CUBEHIP_NO_CHECK void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
CUBEHIP_NO_CHECK void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

#endif
/* Atomics: each is one read-and-write access to the checker (bounds, initialization; an
 * atomic never races with another), then the operation itself, sequentially consistent
 * whatever order was asked (stronger is always allowed). */
#define CUBEHIP_ATOMIC_AT(a) cubehip::check_access(uint64_t(a), sizeof(*(a)), 1, __builtin_return_address(0), true)
#define CUBEHIP_ATOMIC_FNS(bits, T)                                                                                   \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_load(const volatile T* a, int) {                                         \
		cubehip::check_access(uint64_t(a), sizeof(T), 0, __builtin_return_address(0), true);                        \
		return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                                  \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                                      \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		__atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                     \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                                      \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                           \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) {                                     \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                            \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) {                                     \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                            \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) {                                     \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                            \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) {                                      \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                             \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) {                                     \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                            \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                                    \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                           \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {          \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                      \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {            \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		return __atomic_compare_exchange_n(a, c, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                       \
	}                                                                                                                 \
	CUBEHIP_NO_CHECK T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                \
		CUBEHIP_ATOMIC_AT(a);                                                                                         \
		__atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                            \
		return c;                                                                                                     \
	}
CUBEHIP_ATOMIC_FNS(8, unsigned char)
CUBEHIP_ATOMIC_FNS(16, unsigned short)
CUBEHIP_ATOMIC_FNS(32, unsigned int)
CUBEHIP_ATOMIC_FNS(64, unsigned long long)
#undef CUBEHIP_ATOMIC_FNS
#undef CUBEHIP_ATOMIC_AT
}
