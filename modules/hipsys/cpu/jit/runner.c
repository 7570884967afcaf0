/* runner.c: runs a launch's blocks over the host's cores.
 *
 * A persistent pool of pthreads, one pinned to each CPU this process may use, takes
 * chunks of whole blocks from a list of launches in flight, so a launch costs one cgo
 * call and at most one wake-up per worker, never one per block. The launching thread
 * works too, and a launch wakes only the workers of the other CPUs: at most one thread
 * per CPU. A launch too small to repay a wake-up runs inline on the caller.
 *
 * Why pinned, and why not the caller's CPU's: the kernel puts a thread it wakes on the
 * CPU it last ran on or on the waker's, and looks for an idle one only among the CPUs
 * that share a cache with those. Where it is told of no shared cache (a virtual machine
 * whose CPUs report none, as the 2-core dev VM's), a woken worker queued behind the
 * launching thread, on its CPU, while the other CPU stayed idle for a millisecond or
 * more, until the periodic load balancer moved one of them: the launch ran on one core,
 * the worker taking turns with the caller (docs/benchmarks.md, "cpu device: barrier
 * kernels (2026-12-04, 2-core dev VM)"). A worker pinned to its own CPU starts there,
 * and the caller's CPU's worker is left asleep, so the caller keeps its CPU.
 *
 * A launch signals the workers it wakes after unlocking the pool's mutex, and the mutex
 * spins before it sleeps: each woken worker takes the mutex at once to join, and one
 * held across the signals (a system call each) put every worker to sleep again behind it,
 * to be woken one at a time (docs/benchmarks.md, "cpu device: 512-bit vectors and the
 * pool's wake-ups"). */
#define _GNU_SOURCE
#include "runner.h"
#include "fault.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Below this many GPU threads a launch runs on the caller: waking a worker costs several
 * microseconds, about what a few thousand trivial threads take to run. */
#define INLINE_THREADS 4096
/* A small launch whose first block shows the rest would take longer than this on the
 * caller is spread over the pool after all: a few thousand threads each running a loop
 * (a histogram's runs, a grid of few, long blocks) is milliseconds, not microseconds,
 * and the thread count alone cannot tell. About ten wake-ups. */
#define SPREAD_NS 20000
/* Chunks per pool thread: enough that a slow chunk (a core shared with another process)
 * does not leave the others idle at the end, few enough that the shared counter is cold. */
#define CHUNKS_PER_THREAD 4

typedef struct job {
	cubehip_entry_fn fn;
	const cubehip_launch* launch;
	const struct launch_shared* shared; /* the launch's shared memory, or NULL for none */
	cubehip_stop* stop;                 /* its time limit, or NULL */
	uint64_t first;                   /* the range's first block */
	uint64_t nblocks, chunk, nchunks; /* blocks after first */
	atomic_uint_fast64_t next; /* next chunk to claim */
	atomic_int err;
	atomic_int faulted; /* a fault ended the launch; fault is the first one's */
	cubehip_fault fault;
	int barrier;
	int cpu;     /* the launching thread's CPU when the launch began, or -1 */
	int workers; /* workers inside run_chunks for this job; under mu */
	int listed;  /* still on the list; under mu */
	struct job* link;
} job;

typedef struct arena_node {
	char* stacks;
	struct arena_node* link;
} arena_node;

/* A launch's shared memory: its static bytes (the module's layout) and dynamic bytes. */
typedef struct launch_shared {
	uint64_t static_size;
	uint32_t dyn_size;
} launch_shared;

/* This OS thread's shared arena (cubehip_abi.h's cubehip_arena.shared): reserved at the
 * thread's first launch that uses shared memory and kept for the thread's life, so a
 * thread's static variables never move (a thread_local reference to one stays valid).
 * SHARED_GUARD inaccessible bytes, a span of CUBEHIP_MAX_SHARED bytes and two pages (the
 * two parts' rounding up to whole pages), SHARED_GUARD inaccessible bytes: the static
 * variables at the bottom of the span, the dynamic buffer at its top, and
 * only their pages read-write, so that a kernel overflowing its shared memory faults
 * rather than reaching memory of the runtime's, and mostly faults at once (within a
 * page). The guards are wider than a page so that an index a little past the end (a
 * row or a tile too far) still lands in them rather than in the next mapping. The
 * pages' modes change only when a launch's sizes differ from the thread's last one's. */
#define SHARED_GUARD ((size_t)1 << 20)
typedef struct shared_arena {
	char* lo;    /* the span's first byte; NULL until reserved */
	char* hi;    /* just past its last: the upper guard */
	size_t s, d; /* read-write bytes at the bottom, at the top */
} shared_arena;
static __thread shared_arena sha;

/* The lowest and the highest address of every thread's arena mapping, guards included
 * (runner.h): the checker's first test of a shared access, before it looks up the
 * running thread's own arena. They only widen, once per thread's first arena. */
uint64_t cubehip_arena_min = UINT64_MAX, cubehip_arena_max = 0;

static void arena_bounds(uint64_t lo, uint64_t hi) {
	uint64_t old = __atomic_load_n(&cubehip_arena_min, __ATOMIC_RELAXED);
	while (lo < old && !__atomic_compare_exchange_n(&cubehip_arena_min, &old, lo, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
	old = __atomic_load_n(&cubehip_arena_max, __ATOMIC_RELAXED);
	while (hi > old && !__atomic_compare_exchange_n(&cubehip_arena_max, &old, hi, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

static size_t page_size(void) {
	static atomic_size_t page;
	size_t p = atomic_load_explicit(&page, memory_order_relaxed);
	if (p == 0) {
		p = (size_t)sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&page, p, memory_order_relaxed);
	}
	return p;
}

static size_t page_round(size_t n) {
	size_t page = page_size();
	return (n + page - 1) / page * page;
}

/* Fills a's shared fields for a launch's sizes on this thread, mapping the arena's pages
 * to match; nonzero when the system refuses (hipErrorOutOfMemory). */
static int shared_prepare(cubehip_arena* a, const launch_shared* ls) {
	if (ls == NULL) return 0;
	if (sha.lo == NULL) {
		size_t span = page_round(CUBEHIP_MAX_SHARED) + 2 * page_size();
		char* base = mmap(NULL, span + 2 * SHARED_GUARD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED) return -1;
		sha.lo = base + SHARED_GUARD;
		sha.hi = sha.lo + span;
		arena_bounds((uint64_t)base, (uint64_t)base + span + 2 * SHARED_GUARD);
	}
	size_t s = page_round(ls->static_size), d = page_round(ls->dyn_size);
	if (s != sha.s) {
		int rc = s > sha.s ? mprotect(sha.lo + sha.s, s - sha.s, PROT_READ | PROT_WRITE)
		                   : mprotect(sha.lo + s, sha.s - s, PROT_NONE);
		if (rc != 0) return -1;
		sha.s = s;
	}
	if (d != sha.d) {
		int rc = d > sha.d ? mprotect(sha.hi - d, d - sha.d, PROT_READ | PROT_WRITE)
		                   : mprotect(sha.hi - sha.d, sha.d - d, PROT_NONE);
		if (rc != 0) return -1;
		sha.d = d;
	}
	a->shared = sha.lo;
	a->dyn = sha.hi - (((size_t)ls->dyn_size + 63) & ~(size_t)63);
	a->static_size = ls->static_size;
	a->dyn_size = ls->dyn_size;
	return 0;
}

/* One pool thread. Each sleeps on its own condition variable, so a launch chooses whom
 * it wakes. */
typedef struct worker {
	pthread_cond_t cv;
	int cpu;    /* the CPU it is pinned to, or -1 when pinning failed (it runs anywhere) */
	int asleep; /* waiting on cv with nothing asked of it; under mu */
} worker;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static job* jobs;              /* launches with chunks left; under mu */
static arena_node* free_arenas; /* arenas lent to launching threads; under mu */
static worker* workers;
static int nworkers;
static int pool_size; /* threads a launch runs on: one per CPU, the caller among them */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* Reserves the stacks of n fibers. MAP_NORESERVE: only the pages a fiber touches are ever
 * backed, so 64 MiB of address space for 1024 stacks costs what the kernel uses. */
static char* stacks_map(unsigned n) {
	size_t total = (size_t)n * CUBEHIP_FIBER_STACK;
	char* base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (base == MAP_FAILED) return NULL;
	long page = sysconf(_SC_PAGESIZE);
	/* A guard page at the bottom of each stack turns a kernel that overflows its 64 KiB
	 * into a crash at the fault rather than silent corruption of its neighbour thread.
	 * Each guard is a mapping of its own: past the kernel's limit on mappings
	 * (vm.max_map_count, reached with many cores' arenas) mprotect fails, and stacks
	 * without their guards would overflow silently, so the arena is refused instead and
	 * the launch fails as out of memory. */
	for (unsigned i = 0; i < n; i++) {
		if (mprotect(base + (size_t)i * CUBEHIP_FIBER_STACK, (size_t)page, PROT_NONE) != 0) {
			munmap(base, total);
			return NULL;
		}
	}
	return base;
}

/* Reserves the stacks of CUBEHIP_MAX_THREADS fibers. */
static arena_node* arena_new(void) {
	size_t total = (size_t)CUBEHIP_MAX_THREADS * CUBEHIP_FIBER_STACK;
	char* base = stacks_map(CUBEHIP_MAX_THREADS);
	if (base == NULL) return NULL;
	arena_node* n = malloc(sizeof *n);
	if (n == NULL) {
		munmap(base, total);
		return NULL;
	}
	n->stacks = base;
	n->link = NULL;
	return n;
}

static arena_node* arena_borrow(void) {
	pthread_mutex_lock(&mu);
	arena_node* n = free_arenas;
	if (n) free_arenas = n->link;
	pthread_mutex_unlock(&mu);
	return n ? n : arena_new();
}

static void arena_return(arena_node* n) {
	pthread_mutex_lock(&mu);
	n->link = free_arenas;
	free_arenas = n;
	pthread_mutex_unlock(&mu);
}

static void run_chunks(job* j, char* stacks) {
	cubehip_arena arena = {stacks, NULL, NULL, 0, 0};
	if (shared_prepare(&arena, j->shared) != 0) {
		atomic_store(&j->err, 2); /* hipErrorOutOfMemory: no shared arena */
		atomic_store_explicit(&j->next, j->nchunks, memory_order_relaxed);
		return;
	}
	for (;;) {
		uint64_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
		if (c >= j->nchunks) return;
		uint64_t first = c * j->chunk, end = first + j->chunk;
		if (end > j->nblocks) end = j->nblocks;
		first += j->first;
		end += j->first;
		cubehip_fault f;
		int rc = cubehip_guarded(j->fn, j->launch, first, end, &arena, j->stop, &f);
		if (rc == CUBEHIP_FAULTED) {
			/* As on a GPU, a fault ends the whole launch: the chunks nobody has claimed
			 * never run; those running on other threads finish. */
			if (atomic_exchange(&j->faulted, 1) == 0) j->fault = f;
			atomic_store_explicit(&j->next, j->nchunks, memory_order_relaxed);
		} else if (rc) {
			atomic_store(&j->err, rc);
		}
	}
}

static void unlink_locked(job* j) {
	for (job** p = &jobs; *p; p = &(*p)->link)
		if (*p == j) {
			*p = j->link;
			break;
		}
	j->listed = 0;
}

/* The first listed job with chunks left that a worker on cpu helps with: not one whose
 * caller runs on cpu, which it would only take turns with. Exhausted jobs are dropped on
 * the way. */
static job* take_locked(int cpu) {
	for (job** p = &jobs; *p;) {
		job* j = *p;
		if (atomic_load_explicit(&j->next, memory_order_relaxed) >= j->nchunks) {
			*p = j->link;
			j->listed = 0;
			continue;
		}
		if (cpu < 0 || j->cpu != cpu) return j;
		p = &j->link;
	}
	return NULL;
}

static void* worker_main(void* arg) {
	worker* w = arg;
	arena_node* arena = NULL; /* made on this worker's first barrier launch, kept for life */
	pthread_mutex_lock(&mu);
	for (;;) {
		job* j = take_locked(w->cpu);
		if (j == NULL) {
			w->asleep = 1;
			while (w->asleep) pthread_cond_wait(&w->cv, &mu);
			continue;
		}
		j->workers++;
		pthread_mutex_unlock(&mu);
		if (j->barrier && arena == NULL) arena = arena_new();
		/* Without stacks this worker leaves the chunks to the launching thread, which has
		 * its own arena (or has already failed the launch). */
		if (!j->barrier || arena) run_chunks(j, arena ? arena->stacks : NULL);
		pthread_mutex_lock(&mu);
		if (j->listed) unlink_locked(j); /* it was exhausted when this worker stopped */
		if (--j->workers == 0) pthread_cond_broadcast(&done_cv);
	}
	return NULL;
}

static void pool_start(void) {
	cpu_set_t set;
	CPU_ZERO(&set);
	int ncpu = 1;
	if (sched_getaffinity(0, sizeof set, &set) == 0) ncpu = CPU_COUNT(&set);
	if (ncpu < 1) ncpu = 1;
	pool_size = ncpu;
	if (ncpu == 1) return; /* every launch runs on the caller */
	workers = calloc((size_t)ncpu, sizeof *workers);
	if (workers == NULL) {
		pool_size = 1;
		return;
	}
	/* Workers block every signal: Go delivers its own signals to its threads, and a
	 * handler running on a worker's fiber stack has nowhere safe to run. The faults a
	 * kernel raises are the exception: fault.c unblocks them on a worker, with an
	 * alternate stack to handle them on, before its first guarded range of blocks. */
	/* Workers joining a launch take mu at once, for a few hundred nanoseconds each: an
	 * adaptive mutex spins for that rather than putting each to sleep behind another. */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&mu, &ma);
	pthread_mutexattr_destroy(&ma);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int cpu = 0, n = 0; cpu < CPU_SETSIZE && n < ncpu; cpu++) {
		if (!CPU_ISSET(cpu, &set)) continue;
		n++;
		worker* w = &workers[nworkers];
		pthread_cond_init(&w->cv, NULL);
		w->cpu = cpu;
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		/* Pinned from its first instruction; where that is refused (a cpuset that
		 * changed under us), it runs wherever the kernel puts it, and helps every launch. */
		if (pthread_attr_setaffinity_np(&attr, sizeof one, &one) != 0) w->cpu = -1;
		int rc = pthread_create(&t, &attr, worker_main, w);
		if (rc != 0 && w->cpu >= 0) {
			w->cpu = -1;
			pthread_attr_destroy(&attr);
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			rc = pthread_create(&t, &attr, worker_main, w);
		}
		if (rc == 0) nworkers++;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (nworkers == 0) pool_size = 1;
}

int cubehip_pool_threads(void) {
	pthread_once(&pool_once, pool_start);
	return pool_size;
}

/* Runs blocks [first, first + nblocks) of a launch in chunks over the pool's workers and
 * the calling thread, and waits for every chunk. */
static int run_pool(cubehip_entry_fn fn, const cubehip_launch* L, const launch_shared* ls, cubehip_stop* stop,
                    uint64_t first, uint64_t nblocks, int pool, int barrier, char* stacks, cubehip_fault* fault) {
	job j;
	memset(&j, 0, sizeof j);
	j.fn = fn;
	j.launch = L;
	j.shared = ls;
	j.stop = stop;
	j.first = first;
	j.nblocks = nblocks;
	uint64_t target = (uint64_t)pool * CHUNKS_PER_THREAD;
	j.chunk = (nblocks + target - 1) / target;
	j.nchunks = (nblocks + j.chunk - 1) / j.chunk;
	atomic_init(&j.next, 0);
	atomic_init(&j.err, 0);
	atomic_init(&j.faulted, 0);
	j.barrier = barrier;
	j.cpu = sched_getcpu(); /* rdpid or the vDSO: nanoseconds */
	pthread_mutex_lock(&mu);
	j.listed = 1;
	job** tail = &jobs;
	while (*tail) tail = &(*tail)->link;
	*tail = &j;
	/* The sleeping workers of the other CPUs, one per chunk past the caller's first. A
	 * worker whose asleep is cleared here is this launch's to signal: it sleeps again
	 * only after setting asleep under mu itself. */
	worker* wake[nworkers];
	int nwake = 0;
	for (int i = 0; i < nworkers && (uint64_t)nwake + 1 < j.nchunks; i++) {
		worker* w = &workers[i];
		if (!w->asleep || (w->cpu >= 0 && w->cpu == j.cpu)) continue;
		w->asleep = 0;
		wake[nwake++] = w;
	}
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < nwake; i++) pthread_cond_signal(&wake[i]->cv);

	run_chunks(&j, stacks);

	/* Every chunk is claimed; wait for the workers still running theirs. j lives on
	 * this stack, so it must be off the list and unreferenced before returning. */
	pthread_mutex_lock(&mu);
	if (j.listed) unlink_locked(&j);
	while (j.workers > 0) pthread_cond_wait(&done_cv, &mu);
	pthread_mutex_unlock(&mu);
	int rc = atomic_load(&j.err);
	if (atomic_load(&j.faulted)) {
		*fault = j.fault;
		rc = CUBEHIP_FAULTED;
	}
	return rc;
}

/* Cooperative launches. Every block of the grid runs at once, each on an OS thread of its
 * own, so that a grid-wide barrier (cubehip_grid.sync, cooperative groups' this_grid().sync())
 * is reached by every block. The pool's workers cannot promise that: they are one per CPU,
 * and another launch may hold them. So a cooperative launch takes threads of a second pool,
 * grown on demand and kept: the launching thread runs block 0, one of these each other
 * block, unpinned (there may be more blocks than CPUs, as a GPU holds several blocks per
 * multiprocessor), left to the kernel's scheduler. The device's limit on a cooperative grid
 * (launch.go) bounds how many a launch takes. Each keeps stacks for the largest block it
 * ran, sized to the block rather than CUBEHIP_MAX_THREADS: a cooperative launch reserves
 * stacks for every thread of the grid at once, and each stack's guard page is a mapping of
 * its own.
 *
 * The barrier is a mutex and a condition variable: its waiters may outnumber the CPUs, so
 * they sleep rather than spin. A block that ends leaves it (the others no longer wait for
 * it, as a barrier does not wait for a thread that returned), and a block that faults ends
 * it for every block: their waits return nonzero and the kernel traps out of its range
 * (the launch's fault is the first one, as in run_chunks). */
typedef struct coop_run {
	cubehip_grid g; /* first: the kernel's view of it */
	cubehip_entry_fn fn;
	const cubehip_launch* launch;
	const launch_shared* shared;
	cubehip_stop* stop;
	unsigned threads; /* per block */
	int barrier;
	pthread_cond_t cv;  /* the barrier's release and the last block's end */
	unsigned running;   /* blocks not yet ended; under coop_mu */
	unsigned waiting;   /* blocks at the barrier; under coop_mu */
	uint64_t gen;       /* barriers completed; under coop_mu */
	int aborted;        /* a block faulted; under coop_mu */
	atomic_int err;
	atomic_int faulted;
	cubehip_fault fault;
} coop_run;

typedef struct coop_thread {
	pthread_cond_t cv;
	coop_run* run; /* the launch whose block it is given; NULL while idle; under coop_mu */
	uint64_t block;
	char* stacks; /* its fibers' stacks, for cap threads */
	unsigned cap;
	struct coop_thread* next; /* on the idle list */
} coop_thread;

static pthread_mutex_t coop_mu = PTHREAD_MUTEX_INITIALIZER;
static coop_thread* coop_idle; /* under coop_mu */

static int coop_sync(cubehip_grid* g) {
	coop_run* r = (coop_run*)g;
	/* Called from kernel code, inside the block's guard: a time-out must not jump out
	 * while this thread holds coop_mu or waits on the barrier's condition variable. A
	 * launch that times out ends the barrier for all (its blocks abort). */
	cubehip_timeouts_hold(1);
	pthread_mutex_lock(&coop_mu);
	uint64_t gen = r->gen;
	if (!r->aborted && ++r->waiting == r->running) {
		r->waiting = 0;
		r->gen++;
		pthread_cond_broadcast(&r->cv);
	}
	while (r->gen == gen && !r->aborted) pthread_cond_wait(&r->cv, &coop_mu);
	int rc = r->gen == gen; /* ended without its release */
	pthread_mutex_unlock(&coop_mu);
	cubehip_timeouts_hold(0);
	return rc;
}

/* Block b's end: the barrier stops waiting for it. r may be gone once this returns. */
static void coop_leave(coop_run* r, int faulted) {
	pthread_mutex_lock(&coop_mu);
	r->running--;
	if (faulted) {
		r->aborted = 1;
		pthread_cond_broadcast(&r->cv);
	} else if (r->running == 0 || (r->waiting > 0 && r->waiting == r->running)) {
		if (r->waiting > 0) {
			r->waiting = 0;
			r->gen++;
		}
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&coop_mu);
}

static void coop_block(coop_run* r, uint64_t b, char* stacks) {
	cubehip_fault f;
	f.signal = 0;
	cubehip_arena a = {stacks, NULL, NULL, 0, 0};
	int rc = shared_prepare(&a, r->shared) != 0 ? 2 /* hipErrorOutOfMemory */
	                                            : cubehip_guarded(r->fn, r->launch, b, b + 1, &a, r->stop, &f);
	if (rc == CUBEHIP_FAULTED) {
		if (atomic_exchange(&r->faulted, 1) == 0) r->fault = f;
	} else if (rc) {
		atomic_store(&r->err, rc);
	}
	coop_leave(r, rc != 0);
}

static void* coop_main(void* arg) {
	coop_thread* t = arg;
	pthread_mutex_lock(&coop_mu);
	for (;;) {
		while (t->run == NULL) pthread_cond_wait(&t->cv, &coop_mu);
		coop_run* r = t->run;
		uint64_t b = t->block;
		pthread_mutex_unlock(&coop_mu);
		if (r->barrier && t->cap < r->threads) {
			if (t->stacks) munmap(t->stacks, (size_t)t->cap * CUBEHIP_FIBER_STACK);
			t->cap = 0;
			t->stacks = stacks_map(r->threads);
			if (t->stacks) t->cap = r->threads;
		}
		if (r->barrier && t->stacks == NULL) {
			atomic_store(&r->err, 2); /* hipErrorOutOfMemory: no stacks for the block's fibers */
			coop_leave(r, 1);
		} else {
			coop_block(r, b, t->stacks);
		}
		pthread_mutex_lock(&coop_mu);
		t->run = NULL;
		t->next = coop_idle;
		coop_idle = t;
	}
	return NULL;
}

/* An idle cooperative thread, or a new one; NULL when none can be started. Under coop_mu. */
static coop_thread* coop_take_locked(void) {
	coop_thread* t = coop_idle;
	if (t) {
		coop_idle = t->next;
		return t;
	}
	t = calloc(1, sizeof *t);
	if (t == NULL) return NULL;
	pthread_cond_init(&t->cv, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Every signal blocked, as the pool's workers (pool_start says why). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t th;
	int rc = pthread_create(&th, &attr, coop_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_cond_destroy(&t->cv);
		free(t);
		return NULL;
	}
	return t;
}

/* Runs every block of a cooperative launch at once: block 0 on the calling thread (with
 * its arena a), each other on a cooperative thread. Nothing runs unless every block has
 * its thread: hipErrorCooperativeLaunchTooLarge when the threads cannot be started. */
static int run_coop(cubehip_entry_fn fn, cubehip_launch* L, const launch_shared* ls, cubehip_stop* stop, uint64_t nblocks,
                    unsigned threads, int barrier, char* stacks, cubehip_fault* fault) {
	coop_thread** ts = NULL;
	if (nblocks > 1) {
		ts = malloc((size_t)(nblocks - 1) * sizeof *ts);
		if (ts == NULL) return 2; /* hipErrorOutOfMemory */
	}
	coop_run r;
	memset(&r, 0, sizeof r);
	r.g.sync = coop_sync;
	r.fn = fn;
	r.launch = L;
	r.shared = ls;
	r.stop = stop;
	r.threads = threads;
	r.barrier = barrier;
	r.running = (unsigned)nblocks;
	atomic_init(&r.err, 0);
	atomic_init(&r.faulted, 0);
	pthread_cond_init(&r.cv, NULL);
	cubehip_grid* outer = L->coop;
	L->coop = &r.g;
	pthread_mutex_lock(&coop_mu);
	uint64_t got = 0;
	while (got + 1 < nblocks) {
		coop_thread* t = coop_take_locked();
		if (t == NULL) break;
		ts[got++] = t;
	}
	if (got + 1 < nblocks) {
		for (uint64_t i = 0; i < got; i++) {
			ts[i]->next = coop_idle;
			coop_idle = ts[i];
		}
		pthread_mutex_unlock(&coop_mu);
		pthread_cond_destroy(&r.cv);
		free(ts);
		L->coop = outer;
		return 720; /* hipErrorCooperativeLaunchTooLarge */
	}
	for (uint64_t i = 0; i < got; i++) {
		ts[i]->run = &r;
		ts[i]->block = i + 1;
		pthread_cond_signal(&ts[i]->cv);
	}
	pthread_mutex_unlock(&coop_mu);
	free(ts);
	coop_block(&r, 0, stacks);
	pthread_mutex_lock(&coop_mu);
	while (r.running > 0) pthread_cond_wait(&r.cv, &coop_mu);
	pthread_mutex_unlock(&coop_mu);
	pthread_cond_destroy(&r.cv);
	L->coop = outer; /* r is gone when this returns */
	outer->misuse = __atomic_load_n(&r.g.misuse, __ATOMIC_RELAXED);
	int rc = atomic_load(&r.err);
	if (atomic_load(&r.faulted)) {
		*fault = r.fault;
		rc = CUBEHIP_FAULTED;
	}
	return rc;
}

int cubehip_run(void* entry, const void* buf, uint32_t len, const uint32_t* offs, uint32_t nargs,
                uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz,
                uint32_t shared, uint64_t static_shared, int use_shared, int barrier, int coop, cubehip_stop* stop,
                cubehip_fault* fault) {
	/* A private, aligned copy: the Go buffer may be reused as soon as this call returns
	 * and need not be aligned for the kernel's widest argument. */
	_Alignas(16) unsigned char args[CUBEHIP_MAX_PARAM_BYTES];
	void* params[CUBEHIP_MAX_ARGS];
	if (len > sizeof args || nargs > CUBEHIP_MAX_ARGS) return 1; /* hipErrorInvalidValue; Go checked */
	if (len) memcpy(args, buf, len);
	for (uint32_t i = 0; i < nargs; i++) params[i] = args + offs[i];
	cubehip_grid grid = {NULL, 0};
	cubehip_launch L = {params, {gx, gy, gz}, {bx, by, bz}, shared, &grid};
	cubehip_entry_fn fn = (cubehip_entry_fn)entry;
	uint64_t nblocks = (uint64_t)gx * gy * gz;
	/* Only small grids are multiplied out: a maximal grid times 1024 overflows 64 bits. */
	uint64_t threads = nblocks <= INLINE_THREADS ? nblocks * ((uint64_t)bx * by * bz) : UINT64_MAX;

	launch_shared lsv = {static_shared, shared};
	const launch_shared* ls = use_shared ? &lsv : NULL;
	int pool = cubehip_pool_threads();
	arena_node* arena = barrier ? arena_borrow() : NULL;
	if (barrier && arena == NULL) return 2; /* hipErrorOutOfMemory */
	char* stacks = arena ? arena->stacks : NULL;
	cubehip_arena a = {stacks, NULL, NULL, 0, 0};
	int rc;
	fault->signal = 0;
	if (!coop && shared_prepare(&a, ls) != 0) {
		rc = 2; /* hipErrorOutOfMemory: no shared arena */
	} else if (coop) {
		rc = run_coop(fn, &L, ls, stop, nblocks, bx * by * bz, barrier, stacks, fault);
	} else if (pool == 1 || nblocks == 1) {
		rc = cubehip_guarded(fn, &L, 0, nblocks, &a, stop, fault);
	} else if (threads <= INLINE_THREADS) {
		/* Small by its thread count: the first block on the caller, timed, says whether
		 * the rest is worth the pool's wake-ups. Two clock reads (vDSO, tens of ns) on a
		 * launch of a few blocks. */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = cubehip_guarded(fn, &L, 0, 1, &a, stop, fault);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
		if (rc == 0 && ns * (int64_t)(nblocks - 1) > SPREAD_NS) rc = run_pool(fn, &L, ls, stop, 1, nblocks - 1, pool, barrier, stacks, fault);
		else if (rc == 0) rc = cubehip_guarded(fn, &L, 1, nblocks, &a, stop, fault);
	} else {
		rc = run_pool(fn, &L, ls, stop, 0, nblocks, pool, barrier, stacks, fault);
	}
	if (arena) arena_return(arena);
	/* A kernel that met a construct its launch cannot run stored which, then trapped. */
	int misuse = __atomic_load_n(&L.coop->misuse, __ATOMIC_RELAXED);
	if (rc == CUBEHIP_FAULTED && fault->signal == SIGILL && misuse != 0) {
		fault->code = misuse;
		rc = CUBEHIP_MISUSED;
	}
	return rc;
}
