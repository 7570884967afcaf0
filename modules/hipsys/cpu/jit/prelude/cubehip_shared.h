/* cubehip_shared.h: a block's shared memory, in its OS thread's shared arena.
 *
 * Each OS thread that runs blocks has a shared arena (runner.c): a mapping of its own,
 * never next to any state of the runtime, with inaccessible guard pages at either end.
 * The module's static __shared__ variables sit at its bottom, the launch's dynamic buffer
 * ends at its top (rounded up to 64 bytes below the upper guard), and the pages between
 * the two that the launch does not need are inaccessible too: a kernel that overflows a
 * shared array past either end of the arena, or by a page past its part of it, faults
 * (hipErrorIllegalAddress, fault.c) instead of writing over cubehip's own thread-locals
 * (fiber state, region slots, the index copies), as thread_local shared arrays could.
 *
 * The jit rewrites each `__shared__ T a[N], b;` it sees (sharedmem.go), in kernels and
 * __device__ functions alike, into references into the arena:
 *
 *	typedef T __cubehip_sht1_a[N], __cubehip_sht1_b;
 *	struct __cubehip_shg1_a { ... name, line, kernel, alignment ... };
 *	__cubehip_sht1_a& a = ::cubehip::shared_ref<__cubehip_sht1_a, __cubehip_shg1_a>(); ...
 *
 * The tag type is local to the declaring function, so each declaration, and each
 * instantiation of one in a template, is its own variable, as a static one was. Each
 * registers itself when the module is loaded (the dynamic initializer of a class
 * template's static member, which exists only for what the source instantiates), and
 * cubehip_shared_layout, called by the runner after loading, gives each its offset: the
 * variables outside any kernel's body (__device__ functions, namespace scope) first, then
 * each kernel's own from the same place on, since no two kernels run in one block at
 * once. The module's static size is the largest of those ends; the runner keeps it and a
 * launch's dynamic size within CUBEHIP_MAX_SHARED together.
 *
 * For a checker compiled into the module (C linkage, hidden, valid in kernel code):
 *
 *	cubehip_shared_now cubehip_shared_arena(void);
 *		the running block's shared memory on this OS thread: base (the static
 *		variables'; base + static_size ends them), static_size, dyn (the dynamic
 *		buffer), dyn_size (the running launch's dynamic bytes); NULLs and zeros when the
 *		launch uses no shared memory.
 *	const cubehip_shared_var* cubehip_shared_vars(unsigned* n);
 *		the module's static shared variables, *n of them, in registration order: name
 *		(as declared), offset (from base), size (bytes), line (in the source), kernel
 *		(0 outside any kernel's body, else the index of the kernel body it is in,
 *		from 1: variables of different kernels may share offsets).
 */
#pragma once
#include <pthread.h>

extern "C" {
typedef struct cubehip_shared_var {
	const char* name;
	uint64_t offset, size;
	uint32_t line, kernel;
} cubehip_shared_var;
typedef struct cubehip_shared_now {
	char* base;
	uint64_t static_size;
	char* dyn;
	uint64_t dyn_size;
} cubehip_shared_now;
}

#ifndef CUBEHIP_MAX_SHARED_VARS
#define CUBEHIP_MAX_SHARED_VARS 1024
#endif

namespace cubehip {
/* The module's static shared variables: registered at load, laid out once after. */
struct shared_table {
	pthread_mutex_t mu;
	unsigned n;
	int overflow;
	int laid_out;
	uint64_t static_size;
	size_t* offset[CUBEHIP_MAX_SHARED_VARS];
	size_t align[CUBEHIP_MAX_SHARED_VARS];
	cubehip_shared_var vars[CUBEHIP_MAX_SHARED_VARS];
};
CUBEHIP_HIDDEN inline shared_table shared_tbl = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, {}, {}, {}};

/* A variable's alignment in the arena: at least 16 (a float4 view of any shared array is
 * aligned), and a cache line for one of a line or more (a vector's loads never split a
 * line). shared_ref tells the compiler so, as it knew a thread-local array's. */
constexpr size_t shared_align(size_t size, size_t align) {
	const size_t min = size >= 64 ? 64 : 16;
	return align < min ? min : align;
}

inline size_t shared_register(size_t* off, size_t size, size_t align, const char* name, unsigned line, unsigned kernel) {
	shared_table& t = shared_tbl;
	pthread_mutex_lock(&t.mu);
	if (t.n == CUBEHIP_MAX_SHARED_VARS) {
		t.overflow = 1;
	} else {
		const unsigned i = t.n++;
		t.offset[i] = off;
		t.align[i] = shared_align(size, align);
		t.vars[i] = cubehip_shared_var{name, 0, uint64_t(size), line, kernel};
	}
	pthread_mutex_unlock(&t.mu);
	return 0;
}

/* One declaration's variable: T its type, Tag the jit's local struct naming it. */
template <class T, class Tag> struct shared_slot {
	static size_t offset;
};
template <class T, class Tag>
size_t shared_slot<T, Tag>::offset = shared_register(&shared_slot<T, Tag>::offset, sizeof(T),
                                                     Tag::align() > alignof(T) ? Tag::align() : alignof(T), Tag::name(),
                                                     Tag::line(), Tag::kernel());

template <class T, class Tag> __attribute__((always_inline)) inline T& shared_ref() {
	void* p = block()->shared + shared_slot<T, Tag>::offset;
	constexpr size_t align = shared_align(sizeof(T), alignof(T));
	return *static_cast<T*>(__builtin_assume_aligned(p, align));
}

/* The running block's dynamic shared buffer, 64-byte aligned (runner.c). */
__attribute__((always_inline)) inline unsigned char* dyn_base() {
	return static_cast<unsigned char*>(__builtin_assume_aligned(block()->dyn, 64));
}

/* A dynamic shared array named where no local can hold its address (namespace scope,
 * HIP_DYNAMIC_SHARED): the buffer moves with the launch's dynamic size, so each use
 * reads it again. */
template <class T> struct dyn_ptr {
	operator T*() const { return reinterpret_cast<T*>(dyn_base()); }
	T* operator->() const { return reinterpret_cast<T*>(dyn_base()); }
};
} // namespace cubehip

extern "C" {
/* Offsets: the variables outside every kernel first, then each kernel's from their end. */
CUBEHIP_EXPORT int cubehip_shared_layout(uint64_t* static_size) {
	cubehip::shared_table& t = cubehip::shared_tbl;
	pthread_mutex_lock(&t.mu);
	if (!t.laid_out && !t.overflow) {
		auto place = [&](unsigned kernel, uint64_t at) {
			for (unsigned i = 0; i < t.n; i++) {
				if (t.vars[i].kernel != kernel) continue;
				at = (at + t.align[i] - 1) / t.align[i] * t.align[i];
				t.vars[i].offset = at;
				*t.offset[i] = size_t(at);
				at += t.vars[i].size;
			}
			return at;
		};
		const uint64_t common = place(0, 0);
		uint64_t total = common;
		for (unsigned i = 0; i < t.n; i++) {
			const unsigned k = t.vars[i].kernel;
			bool first = k != 0;
			for (unsigned j = 0; j < i && first; j++) first = t.vars[j].kernel != k;
			if (first) {
				const uint64_t end = place(k, common);
				if (end > total) total = end;
			}
		}
		t.static_size = total;
		t.laid_out = 1;
	}
	*static_size = t.static_size;
	const int rc = t.overflow ? -1 : 0;
	pthread_mutex_unlock(&t.mu);
	return rc;
}

CUBEHIP_HIDDEN inline const cubehip_shared_var* cubehip_shared_vars(unsigned* n) {
	*n = cubehip::shared_tbl.n;
	return cubehip::shared_tbl.vars;
}

CUBEHIP_HIDDEN inline cubehip_shared_now cubehip_shared_arena(void) {
	const cubehip::block_ctx* c = cubehip::block();
	return cubehip_shared_now{c->shared, c->static_size, c->dyn, c->dyn_size};
}
}
