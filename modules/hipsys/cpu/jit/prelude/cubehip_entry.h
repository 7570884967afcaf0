/* cubehip_entry.h: the launchers the jit instantiates for each extern "C" __global__ entry
 * (CUBEHIP_ENTRY at the end of the translation unit) and the block scheduler of barrier
 * kernels. */
#pragma once

/* Set by the jit on the command line (-D) from what it found in the source. */
#ifndef CUBEHIP_TLS_BUILTINS
#define CUBEHIP_TLS_BUILTINS 1
#endif
/* The thread-local blockIdx is kept current where code outside the entry bodies reads it,
 * and in every checked module: a report names its block from it, and synccheck's records
 * of a region barrier start afresh with each block (check_region_barrier), also where the
 * thread index is not kept (a module checked for synccheck alone). */
#ifdef CUBEHIP_CHECK
#define CUBEHIP_TLS_BLOCK 1
#else
#define CUBEHIP_TLS_BLOCK CUBEHIP_TLS_BUILTINS
#endif
/* The module calls warp functions (shuffles, votes, __syncwarp, cooperative groups' tiles):
 * its fiber entries are scheduled warp by warp as well as at barriers. */
#ifndef CUBEHIP_WARPS
#define CUBEHIP_WARPS 0
#endif

/* The checker's hooks (cubehip_check.h) in a checked module; nothing otherwise. */
#ifdef CUBEHIP_CHECK
#define CUBEHIP_CHECK_BARRIER(t) ::cubehip::check_barrier(t)
#define CUBEHIP_CHECK_EXIT(t) ::cubehip::check_exit(t)
#define CUBEHIP_CHECK_GENERATION(n, idx) ::cubehip::check_generation((n), (idx))
#define CUBEHIP_BARRIER_ATTR
#else
#define CUBEHIP_CHECK_BARRIER(t) ((void)0)
#define CUBEHIP_CHECK_EXIT(t) ((void)0)
#define CUBEHIP_CHECK_GENERATION(n, idx) ((void)0)
#define CUBEHIP_BARRIER_ATTR
#endif
#ifdef CUBEHIP_CHECK_SHADOW
#define CUBEHIP_CHECK_ARENA(a) ::cubehip::check_arena(a)
#else
#define CUBEHIP_CHECK_ARENA(a) ((void)0)
#endif
#ifdef CUBEHIP_CHECK
#define CUBEHIP_CHECK_BLOCK() ::cubehip::check_block()
#else
#define CUBEHIP_CHECK_BLOCK() ((void)0)
#endif

namespace cubehip {

/* The kernel's arguments, copied once per block range out of the launch's parameter
 * block into typed locals: the kernel's stores through its pointers cannot alias them,
 * so the compiler keeps them in registers across the thread loop (reading them through
 * params[i] at every thread would reload after every store of a matching type). */
template <size_t I, class T> struct leaf {
	T v;
};
template <class S, class... A> struct pack_impl;
template <size_t... I, class... A> struct pack_impl<std::index_sequence<I...>, A...> : leaf<I, A>... {
	explicit pack_impl(void** p) : leaf<I, A>{load<A>(p[I])}... {}
	template <class T> static T load(const void* p) {
		static_assert(std::is_trivially_copyable<T>::value, "kernel arguments must be trivially copyable");
		T v;
		std::memcpy(static_cast<void*>(&v), p, sizeof v);
		return v;
	}
	template <void (*F)(A...)> void call() { F(static_cast<leaf<I, A>&>(*this).v...); }
};
template <class... A> using pack = pack_impl<std::index_sequence_for<A...>, A...>;

/* What an entry body needs to know about the blocks it runs: set by the launcher once per
 * block range (loop modules) or per block (fibers, with the thread's index before each
 * fiber starts). Reached through a const function so the body fetches the thread-local's
 * address once, not per access. */
struct block_ctx {
	uint3 bid, bdim, gdim;
	uint3 tid;      /* fibers: the thread the body runs */
	uint64_t count; /* loop modules: blocks to run, x fastest from bid */
	/* The block's shared memory (cubehip_arena, cubehip_shared.h): the static variables'
	 * base and the dynamic buffer, and their sizes. */
	char* shared;
	char* dyn;
	uint64_t static_size, dyn_size;
	/* Barriers the OS thread's regions passed (a checked module's: racecheck's generation
	 * where no fiber counts them, cubehip_check_shared.h). */
	uint64_t epoch;
};
CUBEHIP_HIDDEN __thread block_ctx ctx_tls;
CUBEHIP_HIDDEN __attribute__((const, noinline)) inline block_ctx* block() { return &ctx_tls; }
/* The thread-local threadIdx and blockIdx, reached the same way: GCC recomputes a
 * thread-local's address (a __tls_get_addr call) wherever it stores to it, inside a thread
 * loop too, where a const call's result is hoisted out of the loop and kept
 * (docs/benchmarks.md, "Kernel checker (2026-12-05)"). */
CUBEHIP_HIDDEN __attribute__((const, noinline)) inline uint3* thread_slot() { return &::threadIdx; }
CUBEHIP_HIDDEN __attribute__((const, noinline)) inline uint3* block_slot() { return &::blockIdx; }
/* After a thread loop stores the thread-local index: in a module checked through
 * ThreadSanitizer's calls, which GCC adds after its loop optimizations, nothing in the
 * loop reads the index when those run, and they would move the store out of the loop (a
 * report would name the loop's last thread); a compiler barrier keeps one per thread. The
 * inline shadow's calls are there before, and hold the store in place themselves. */
/* The checks whose accesses are instrumented, in CUBEHIP_CHECK's bits (hipsys.Checks):
 * memcheck 1, initcheck 2, racecheck 8 (synccheck, 4, watches barriers only). */
#if defined(CUBEHIP_CHECK) && (CUBEHIP_CHECK & (1 | 2 | 8))
#define CUBEHIP_CHECK_ACCESSES 1
#else
#define CUBEHIP_CHECK_ACCESSES 0
#endif
#if CUBEHIP_CHECK_ACCESSES && !defined(CUBEHIP_CHECK_SHADOW)
#define CUBEHIP_INDEX_STORED() asm volatile("" ::: "memory")
#else
#define CUBEHIP_INDEX_STORED() ((void)0)
#endif
/* Stores an index into its thread-local (store_index(thread_slot(), t)). In a module whose
 * accesses are instrumented the store is an asm's, which no instrumentation sees: a check
 * (or, under racecheck, a call) of the runtime's own thread-local per thread and region,
 * more of them than the kernel's own accesses in a barrier kernel's regions. */
__attribute__((always_inline)) inline void store_index(uint3* p, uint3 v) {
#if CUBEHIP_CHECK_ACCESSES
	asm("movl %1, %0" : "=m"(p->x) : "r"(v.x));
	asm("movl %1, %0" : "=m"(p->y) : "r"(v.y));
	asm("movl %1, %0" : "=m"(p->z) : "r"(v.z));
#else
	*p = v;
#endif
	CUBEHIP_INDEX_STORED();
}
/* The launch the OS thread is running blocks of: the grid's barrier (grid_group::sync)
 * is reached through it. */
CUBEHIP_HIDDEN __thread const cubehip_launch* launch_tls;

inline void set_dims(const cubehip_launch* L, const cubehip_arena* a) {
	launch_tls = L;
	block_ctx* c = block();
	if (a != nullptr) {
		c->shared = a->shared;
		c->dyn = a->dyn;
		c->static_size = a->static_size;
		c->dyn_size = a->dyn_size;
		CUBEHIP_CHECK_ARENA(a);
	} else {
		c->shared = c->dyn = nullptr;
		c->static_size = c->dyn_size = 0;
	}
	c->gdim = uint3{L->grid[0], L->grid[1], L->grid[2]};
	c->bdim = uint3{L->block[0], L->block[1], L->block[2]};
	c->tid = uint3{0, 0, 0};
	c->count = 1;
	::gridDim = c->gdim;
	::blockDim = c->bdim;
}

inline void set_block(unsigned x, unsigned y, unsigned z) {
	block()->bid = uint3{x, y, z};
	/* A thread-local store costs a __tls_get_addr call: only when code outside the entry
	 * bodies reads the globals. */
	if (CUBEHIP_TLS_BLOCK) ::blockIdx = uint3{x, y, z};
	CUBEHIP_CHECK_BLOCK();
}

/* The fibers of the block an OS thread is running: one stack pointer per thread of the
 * block, the scheduler's own, and whether each thread has returned. Lives on the runner's
 * native stack for the length of one block range. */
#if CUBEHIP_WARPS
/* One warp's collective in progress. Lanes post a value into val[par] and wait; when every
 * lane still running has posted (or waits at a block barrier, which it cannot leave before
 * this warp's lanes get there too), the collective completes: par flips, and each lane
 * reads the others' values from the half it posted in. A lane reads before it can post
 * its next value, and the next collective cannot complete until every lane posted, so two
 * halves are enough. */
struct warp_state {
	unsigned arrived; /* lanes posted in the collective in progress */
	unsigned at_bar;  /* lanes waiting at a block barrier */
	unsigned live;    /* lanes that have not returned */
	unsigned par;     /* the half the collective in progress posts into */
	uint64_t mask[2]; /* lanes that took part, per half */
	uint64_t val[2][CUBEHIP_WARP_SIZE];
};
enum : unsigned char { fiber_run = 0, fiber_at_barrier = 1, fiber_at_warp = 2, fiber_done = 3 };
#endif
struct fibers {
	void* sched;
	unsigned cur, n;
	/* __syncthreads_count & co.: barrier generation epoch counts into votes[epoch & 1]
	 * (threads with the predicate) and arrivals[epoch & 1]; when a generation completes
	 * the next one's slots are cleared, which every thread has read by then (it read them
	 * before reaching the barrier that just completed). */
	unsigned epoch;
	unsigned votes[2], arrivals[2];
	void (*body)(void*);
	void* args;
	block_ctx* ctx;
	void* sp[CUBEHIP_MAX_THREADS];
	uint3 idx[CUBEHIP_MAX_THREADS];
	unsigned char done[CUBEHIP_MAX_THREADS];
#if CUBEHIP_WARPS
	unsigned live, at_bar;                    /* threads not returned; threads at the barrier */
	unsigned char state[CUBEHIP_MAX_THREADS]; /* fiber_run, ... */
	warp_state warps[CUBEHIP_MAX_THREADS / CUBEHIP_WARP_SIZE];
#endif
};
CUBEHIP_HIDDEN __thread fibers* current;
/* A const accessor, as for block(): one __tls_get_addr per function, not per barrier. */
CUBEHIP_HIDDEN __attribute__((const, noinline)) inline fibers** current_slot() { return &current; }

/* Switches from the running fiber (its stack pointer saved in *save) straight to the next
 * live fiber of the round, or to the scheduler after the last one: a round costs one
 * switch per thread, not two. */
inline void resume_next(fibers* f, void** save) {
	for (unsigned t = f->cur + 1; t < f->n; t++)
		if (!f->done[t]) {
			f->cur = t;
			f->ctx->tid = f->idx[t];
			if (CUBEHIP_TLS_BUILTINS) ::threadIdx = f->idx[t];
			cubehip_swap(save, f->sp[t]);
			return;
		}
	cubehip_swap(save, f->sched);
}

/* A barrier generation completed: the next one counts from zero. */
inline void next_epoch(fibers* f) {
	f->epoch++;
	f->votes[f->epoch & 1] = f->arrivals[f->epoch & 1] = 0;
}
inline void start_epochs(fibers* f) {
	f->epoch = 0;
	f->votes[0] = f->votes[1] = f->arrivals[0] = f->arrivals[1] = 0;
}

#if !CUBEHIP_WARPS
CUBEHIP_HIDDEN CUBEHIP_BARRIER_ATTR void barrier() {
	fibers* f = *current_slot();
	if (f == nullptr) return;
	CUBEHIP_CHECK_BARRIER(f->cur);
	resume_next(f, &f->sp[f->cur]);
}
#else
/* Warp modules: a fiber waits at a barrier (for every thread of the block) or at a warp
 * collective (for the lanes of its warp), and only runnable fibers are resumed. Each wait
 * switches straight to the next runnable fiber in thread order, wrapping around, so the
 * lanes of a warp run one after another to the collective and then on; the scheduler is
 * switched to only when nothing is runnable, which the last thread's return makes so. */
inline void switch_to(fibers* f, unsigned u, void** save) {
	f->cur = u;
	f->ctx->tid = f->idx[u];
	if (CUBEHIP_TLS_BUILTINS) ::threadIdx = f->idx[u];
	cubehip_swap(save, f->sp[u]);
}
/* The first runnable fiber after t in thread order, wrapping around; n if none. */
inline unsigned next_runnable(const fibers* f, unsigned t) {
	for (unsigned u = t + 1; u < f->n; u++)
		if (f->state[u] == fiber_run) return u;
	for (unsigned u = 0; u <= t && u < f->n; u++)
		if (f->state[u] == fiber_run) return u;
	return f->n;
}
inline void complete_warp(fibers* f, unsigned w) {
	warp_state& ws = f->warps[w];
	const unsigned end = (w + 1) * CUBEHIP_WARP_SIZE < f->n ? (w + 1) * CUBEHIP_WARP_SIZE : f->n;
	for (unsigned u = w * CUBEHIP_WARP_SIZE; u < end; u++)
		if (f->state[u] == fiber_at_warp) f->state[u] = fiber_run;
	ws.arrived = 0;
	ws.par ^= 1;
	ws.mask[ws.par] = 0;
}
inline void release_barrier(fibers* f) {
	CUBEHIP_CHECK_GENERATION(f->n, f->idx);
	for (unsigned u = 0; u < f->n; u++)
		if (f->state[u] == fiber_at_barrier) f->state[u] = fiber_run;
	f->at_bar = 0;
	next_epoch(f);
	for (unsigned w = 0; w * CUBEHIP_WARP_SIZE < f->n; w++) f->warps[w].at_bar = 0;
}
/* Completes what the last change of warp w's lanes made complete. */
inline void settle(fibers* f, unsigned w) {
	warp_state& ws = f->warps[w];
	if (ws.arrived != 0 && ws.arrived + ws.at_bar == ws.live) complete_warp(f, w);
	if (f->at_bar != 0 && f->at_bar == f->live) release_barrier(f);
}
/* Hands the OS thread to the next runnable fiber (none other: t keeps running). */
inline void yield(fibers* f, unsigned t) {
	const unsigned u = next_runnable(f, t);
	if (u == t) return;
	if (u == f->n) cubehip_swap(&f->sp[t], f->sched);
	else switch_to(f, u, &f->sp[t]);
}
CUBEHIP_HIDDEN CUBEHIP_BARRIER_ATTR void barrier() {
	fibers* f = *current_slot();
	if (f == nullptr) return;
	const unsigned t = f->cur;
	CUBEHIP_CHECK_BARRIER(t);
	f->state[t] = fiber_at_barrier;
	f->at_bar++;
	f->warps[t / CUBEHIP_WARP_SIZE].at_bar++;
	settle(f, t / CUBEHIP_WARP_SIZE);
	yield(f, t);
}
/* Posts v for the running lane's warp collective and returns once the collective is
 * complete: *lane is the caller's lane, and ws->val[*half] and ws->mask[*half] what every
 * lane posted. nullptr outside a warp kernel's fibers. */
inline warp_state* warp_post(uint64_t v, unsigned* lane, unsigned* half) {
	fibers* f = *current_slot();
	if (f == nullptr) return nullptr;
	const unsigned t = f->cur, w = t / CUBEHIP_WARP_SIZE;
	warp_state& ws = f->warps[w];
	*lane = t % CUBEHIP_WARP_SIZE;
	*half = ws.par;
	ws.val[ws.par][*lane] = v;
	ws.mask[ws.par] |= 1ull << *lane;
	ws.arrived++;
	f->state[t] = fiber_at_warp;
	settle(f, w);
	yield(f, t);
	return &ws;
}
inline unsigned lane_id() {
	fibers* f = *current_slot();
	return f ? f->cur % CUBEHIP_WARP_SIZE : 0;
}
#endif

CUBEHIP_HIDDEN int barrier_vote(int pred, int op) {
	fibers* f = *current_slot();
	if (f == nullptr) return pred != 0; /* no scheduler (a call the jit did not see): the thread is the block */
	const unsigned slot = f->epoch & 1;
	f->votes[slot] += pred != 0;
	f->arrivals[slot]++;
	barrier();
	const unsigned votes = f->votes[slot], arrivals = f->arrivals[slot];
	return op == 0 ? int(votes) : op == 1 ? votes == arrivals : votes != 0;
}

/* Where fiber t's stack starts below the top of its 64 KiB slot. Slots are 64 KiB apart,
 * so unstaggered tops would all fall in the same cache sets and a 256-thread block would
 * evict its own saved registers at every switch; the stagger spreads them over 64 L1 sets
 * and 4 pages, at a cost of at most 16 KiB of the stack. */
inline size_t stack_stagger(unsigned t) { return size_t(t % 64) * 64 + size_t((t / 64) % 4) * 4096; }

/* Walks the linear block range [b, end) in x-fastest order without a division per block. */
struct block_walk {
	unsigned x, y, z, gx, gy;
	block_walk(const cubehip_launch* L, uint64_t b) : gx(L->grid[0]), gy(L->grid[1]) {
		x = unsigned(b % gx);
		uint64_t q = b / gx;
		y = unsigned(q % gy);
		z = unsigned(q / gy);
	}
	void next() {
		if (++x == gx) {
			x = 0;
			if (++y == gy) {
				y = 0;
				++z;
			}
		}
	}
};

template <class Fn> struct entry;
template <class... A> struct entry<void (*)(A...)> {
	static unsigned sig(cubehip_param* out, unsigned cap) {
		const cubehip_param s[] = {cubehip_param{uint32_t(sizeof(A)), uint32_t(alignof(A)), uint32_t(std::is_pointer<A>::value)}...,
		                           cubehip_param{0, 0, 0}};
		for (unsigned i = 0; i < sizeof...(A) && i < cap; i++) out[i] = s[i];
		return sizeof...(A);
	}

	/* No barrier anywhere in the module: one call of the entry per block range, whose body
	 * (wrapped in CUBEHIP_THREADS_BEGIN/END, run below) loops over the blocks and their
	 * threads itself. A call per block instead slowed a streaming kernel (docs/benchmarks.md,
	 * "cpu device: one call per block range"): the entry is too big to inline here, and its
	 * per-call setup (vector loop versioning) ran for every 256 threads. */
	template <void (*F)(A...)> static int loop(const cubehip_launch* L, uint64_t b, uint64_t end, cubehip_arena* arena) {
		pack<A...> args(L->params);
		set_dims(L, arena);
		/* No fibers here: a fiber launch that a fault or a time limit ended on this thread
		 * left its (dead) scheduler behind, which a barrier reached from this body would
		 * switch into. */
		*current_slot() = nullptr;
		block_walk w(L, b);
		block_ctx* c = block();
		c->bid = uint3{w.x, w.y, w.z};
		c->count = end - b;
		args.template call<F>();
		print_flush();
		return 0;
	}

#if CUBEHIP_WARPS
	/* One block of a warp module: resumes runnable fibers until every one has returned.
	 * Fibers hand the thread to each other (yield); control comes back here only when
	 * none is runnable. With threads still waiting that cannot happen for a kernel whose
	 * every thread reaches the same barriers (a GPU requires it), so a wait nothing can
	 * end is ended here instead: pending collectives complete with the lanes they have,
	 * and the barrier opens, rather than the launch hanging. */
	static void run_warps(fibers& st) {
		st.live = st.n;
		st.at_bar = 0;
		start_epochs(&st);
		for (unsigned t = 0; t < st.n; t++) st.state[t] = fiber_run;
		for (unsigned w = 0; w * CUBEHIP_WARP_SIZE < st.n; w++) {
			warp_state& ws = st.warps[w];
			ws.arrived = ws.at_bar = ws.par = 0;
			ws.mask[0] = ws.mask[1] = 0;
			ws.live = (w + 1) * CUBEHIP_WARP_SIZE <= st.n ? CUBEHIP_WARP_SIZE : st.n - w * CUBEHIP_WARP_SIZE;
		}
		while (st.live > 0) {
			unsigned u = next_runnable(&st, st.n - 1);
			if (u == st.n) {
				for (unsigned w = 0; w * CUBEHIP_WARP_SIZE < st.n; w++)
					if (st.warps[w].arrived) complete_warp(&st, w);
				if (st.at_bar) release_barrier(&st);
				continue;
			}
			switch_to(&st, u, &st.sched);
		}
		CUBEHIP_CHECK_GENERATION(st.n, st.idx); /* the last generation, which no barrier ends */
	}
#endif

	template <void (*F)(A...)> static void body(void* args) { static_cast<pack<A...>*>(args)->template call<F>(); }

	/* The module calls __syncthreads: every thread of a block is a fiber on this OS thread.
	 * The scheduler resumes each live fiber in turn until it reaches a barrier or returns,
	 * so round k runs every thread from barrier k-1 to barrier k, which is exactly what a
	 * barrier promises. Each fiber runs its own call of the entry, whose body runs just its
	 * thread (CUBEHIP_FIBER_END); the thread-local threadIdx that code outside entry bodies
	 * reads is per OS thread, so it is set before each resume. */
	template <void (*F)(A...)> static int fiber(const cubehip_launch* L, uint64_t b, uint64_t end, cubehip_arena* arena) {
		pack<A...> args(L->params);
		set_dims(L, arena);
		const unsigned bx = L->block[0], by = L->block[1], bz = L->block[2];
		const unsigned n = bx * by * bz;
		fibers st;
		st.body = &body<F>;
		st.args = &args;
		for (unsigned t = 0, z = 0; z < bz; z++)
			for (unsigned y = 0; y < by; y++)
				for (unsigned x = 0; x < bx; x++) st.idx[t++] = uint3{x, y, z};
		block_ctx* ctx = block();
		st.ctx = ctx;
		st.n = n;
		fibers** slot = current_slot();
		fibers* outer = *slot;
		*slot = &st;
		for (block_walk w(L, b); b < end; ++b, w.next()) {
			set_block(w.x, w.y, w.z);
			for (unsigned t = 0; t < n; t++) {
				st.sp[t] = fiber_stack(arena->base + size_t(t + 1) * CUBEHIP_FIBER_STACK - stack_stagger(t));
				st.done[t] = 0;
			}
#if CUBEHIP_WARPS
			run_warps(st);
			continue;
#endif
			/* Each round starts at the first live fiber, which hands on to the next
			 * (resume_next) until the last comes back here; a round is one barrier
			 * generation. */
			start_epochs(&st);
			for (unsigned first = 0;;) {
				while (first < n && st.done[first]) first++;
				if (first == n) break;
				next_epoch(&st);
				st.cur = first;
				ctx->tid = st.idx[first];
				if (CUBEHIP_TLS_BUILTINS) ::threadIdx = st.idx[first];
				cubehip_swap(&st.sched, st.sp[first]);
				CUBEHIP_CHECK_GENERATION(n, st.idx);
			}
		}
		*slot = outer;
		print_flush();
		return 0;
	}
};
} // namespace cubehip

/* Every fiber starts here (cubehip_fiber.h builds its stack to return into it) and ends
 * by switching back to the scheduler for good; its stack is rebuilt for the next block. */
extern "C" CUBEHIP_HIDDEN void cubehip_fiber_main(void) {
	cubehip::fibers* f = *cubehip::current_slot();
	f->body(f->args);
	f->done[f->cur] = 1;
	CUBEHIP_CHECK_EXIT(f->cur);
	void* dead;
#if CUBEHIP_WARPS
	/* A returned lane leaves its warp's collectives and the block's barriers. */
	const unsigned t = f->cur, w = t / CUBEHIP_WARP_SIZE;
	f->state[t] = cubehip::fiber_done;
	f->live--;
	f->warps[w].live--;
	cubehip::settle(f, w);
	const unsigned u = cubehip::next_runnable(f, t);
	if (u == f->n) cubehip_swap(&dead, f->sched);
	else cubehip::switch_to(f, u, &dead);
#else
	cubehip::resume_next(f, &dead);
#endif
	__builtin_unreachable();
}

#define CUBEHIP_EXPORT extern "C" __attribute__((visibility("default")))
/* The launcher's own parameters have reserved names: a kernel may be called L or a. */
#define CUBEHIP_ENTRY(sym, fn, mode)                                                                                   \
	CUBEHIP_EXPORT int cubehip_run_##sym(const cubehip_launch* __cubehip_l, uint64_t __cubehip_b, uint64_t __cubehip_e, \
	                                     cubehip_arena* __cubehip_a) {                                               \
		return ::cubehip::entry<decltype(&fn)>::template mode<&fn>(__cubehip_l, __cubehip_b, __cubehip_e, __cubehip_a); \
	}                                                                                                                \
	CUBEHIP_EXPORT unsigned cubehip_sig_##sym(cubehip_param* __cubehip_p, unsigned __cubehip_cap) {                  \
		return ::cubehip::entry<decltype(&fn)>::sig(__cubehip_p, __cubehip_cap);                                     \
	}

/* Runs an entry body (a closure taking blockIdx and threadIdx) for every thread of block
 * bid, keeping the thread-local threadIdx current when tls is set. Each thread calls a
 * fresh copy of the closure: a kernel may modify its by-value parameters, and on a GPU
 * every thread starts from the launch's values.
 *
 * The x loop comes in two forms. The usual HIP index, `int i = blockIdx.x * blockDim.x +
 * threadIdx.x`, is an unsigned sum converted to int, which may wrap; looping over x, GCC
 * (12) can prove nothing about i, so `if (i < n)` keeps the loop scalar (or, with a 64-bit
 * index, vectorized with AVX-512 masked loads and stores, which stream slower than scalar
 * code). When the block's first index plus its width fits in an int (every block of a grid
 * under 2^31 threads in x), the loop runs instead over that int index itself, s, with
 * threadIdx.x = s - base: the body's index expression folds back to s, a non-wrapping
 * induction variable, so GCC's loop splitting (which splits only on the loop's own signed
 * counter) cuts the loop at `i < n` into a check-free part, vectorized without masks, and
 * a tail. Blocks that straddle the wrap take the plain loop over x. The body is thus
 * compiled twice; GCC inlines small bodies, where it matters, into both.
 *
 * The split brings an int index's vector add level with a plain C loop (docs/benchmarks.md,
 * "cpu device: the thread loop split at its guard"). An unsigned index folds to s too, but
 * GCC 12 splits no unsigned counter (nor a cast of s), so it is vectorized with masks:
 * faster in cache than the scalar loop, slower streaming. An `omp simd` thread loop vectorizes nothing:
 * GCC privatizes the closure per lane before inlining it. */
namespace cubehip {
/* Off: the body's index is the global one plus Off (`int x = blockIdx.x * blockDim.x +
 * threadIdx.x + 1`, indexoffset.go), and the loop runs over that, so the body's guard on
 * it is again a guard on the loop's counter, which GCC splits. */
template <int Off = 0, class F> __attribute__((always_inline)) inline void threads(const F& body, uint3 bid, uint3 bdim, uint3* tls) {
	const unsigned base = bid.x * bdim.x;
	if (uint64_t(base) + bdim.x + uint64_t(Off > 0 ? Off : 0) <= uint64_t(INT_MAX)) {
		const int s0 = int(base) + Off, s1 = s0 + int(bdim.x);
		for (unsigned z = 0; z < bdim.z; z++)
			for (unsigned y = 0; y < bdim.y; y++)
				for (int s = s0; s < s1; s++) {
					const uint3 t{unsigned(s - Off) - base, y, z};
					if constexpr (CUBEHIP_TLS_BUILTINS) store_index(tls, t);
					F f = body;
					f(bid, t);
				}
		return;
	}
	for (unsigned z = 0; z < bdim.z; z++)
		for (unsigned y = 0; y < bdim.y; y++)
			for (unsigned x = 0; x < bdim.x; x++) {
				const uint3 t{x, y, z};
				if constexpr (CUBEHIP_TLS_BUILTINS) store_index(tls, t);
				F f = body;
				f(bid, t);
			}
}

/* Calls f(bid) for each block of c in x-fastest order, keeping the thread-local blockIdx
 * current for code outside entry bodies (CUBEHIP_TLS_BUILTINS). */
template <class F> __attribute__((always_inline)) inline void each_block(const block_ctx& c, const F& f) {
	uint3 bid = c.bid;
	for (uint64_t k = 0; k < c.count; k++) {
		if constexpr (CUBEHIP_TLS_BLOCK) store_index(block_slot(), bid);
		CUBEHIP_CHECK_BLOCK();
		f(bid);
		if (++bid.x == c.gdim.x) {
			bid.x = 0;
			if (++bid.y == c.gdim.y) {
				bid.y = 0;
				++bid.z;
			}
		}
	}
}

/* Runs an entry body (a closure taking blockIdx and threadIdx) over the blocks of c. c is
 * a copy: the body's stores cannot alias it. */
template <int Off = 0, class F> __attribute__((always_inline)) inline void run(const F& body, const block_ctx c) {
	uint3* const tls_thread = CUBEHIP_TLS_BUILTINS ? thread_slot() : nullptr;
	each_block(c, [&](uint3 bid) { threads<Off>(body, bid, c.bdim, tls_thread); });
}

/* Runs an entry body for the fiber's own block and thread. */
template <class F> __attribute__((always_inline)) inline void run_fiber(const F& body, const block_ctx c) {
	F f = body;
	f(c.bid, c.tid);
}
} // namespace cubehip

/* The body of every extern "C" __global__ entry is wrapped (by the jit, in the source) in
 * these: the original body becomes a lambda taking blockIdx and threadIdx, with blockDim
 * and gridDim locals it captures; they shadow the thread-local globals, so the compiler
 * keeps them in registers and can vectorize across threads. ::cubehip::run calls it once
 * per thread of each block. The lambda is what keeps GPU semantics: `return` ends one
 * thread, and by-value capture gives every thread its own copies of the kernel's
 * parameters. */
#define CUBEHIP_THREADS_BEGIN CUBEHIP_THREADS_BEGIN_AT(0)
/* The same for a body whose index is the global one plus off (threads' Off). */
#define CUBEHIP_THREADS_BEGIN_AT(off)                                                         \
	{                                                                                         \
		[[maybe_unused]] constexpr int __cubehip_off = (off);                                 \
		const ::cubehip::block_ctx* __cubehip_b = ::cubehip::block();                        \
		[[maybe_unused]] const uint3 blockDim = __cubehip_b->bdim, gridDim = __cubehip_b->gdim; \
		const auto __cubehip_body = [=]([[maybe_unused]] const uint3 blockIdx, [[maybe_unused]] const uint3 threadIdx) mutable -> void {
#define CUBEHIP_THREADS_END                          \
	}                                                \
	;                                                \
	::cubehip::run<__cubehip_off>(__cubehip_body, *__cubehip_b); \
	}
/* The end of a body that runs as one fiber per thread (it has barriers or warp functions
 * the jit did not turn into regions, cubehip_regions.h): the fiber's own thread only. */
#define CUBEHIP_FIBER_END                               \
	}                                                   \
	;                                                   \
	::cubehip::run_fiber(__cubehip_body, *__cubehip_b); \
	}
