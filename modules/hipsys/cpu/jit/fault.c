/* fault.c: a kernel that faults ends its launch, not the process.
 *
 * Kernels run in this process, so an out-of-bounds access (SIGSEGV, SIGBUS), an integer
 * division by zero (SIGFPE), __trap() (SIGILL) or abort() (SIGABRT) raises a signal on
 * the thread running the kernel. Go's runtime owns the handlers of those signals and,
 * for one raised outside Go code, crashes the process naming no kernel. The handlers
 * installed here sit in front of Go's: a signal raised by kernel code (this thread's
 * guard is set, and the kernel, not kill(2), sent it) jumps back to cubehip_guarded,
 * which returns CUBEHIP_FAULTED and lets the runner end the launch; every other signal
 * goes on to the handler that was there before (Go's), as if these were not installed,
 * so a nil dereference in Go code still panics and os/signal still sees its signals.
 *
 * The handlers run on the thread's alternate signal stack (SA_ONSTACK): Go's on Go
 * threads, one of our own on the pool's workers. A kernel may fault on a fiber's stack,
 * even by overflowing it into its guard page, where no handler could run; the jump
 * back to the guard's native stack frame restores the signal mask saved there.
 *
 * What a jump cannot undo: C++ destructors of the kernel's frames do not run, and a lock
 * the kernel held (a printf's stdio lock in a libc call) stays held. Kernels take no
 * locks of cubehip's; the prelude's printf formats into a per-thread buffer.
 *
 * A launch's time limit ends a kernel that never returns the same way. Nothing the
 * kernel does raises a signal there (`while (1) {}` touches no memory), so one is sent:
 * cubehip_stop_fire marks the launch expired and sends the time-out signal (a real-time
 * one, SIGRTMIN + 5, which Go does not use) to each thread whose guarded range belongs
 * to it, found in a list of the threads that ran limited launches; the handler jumps
 * back to the guard as for a fault, with CUBEHIP_FAULT_TIMEOUT for the signal. It acts
 * only while the thread's guard is set and belongs to an expired launch, and never while
 * the thread holds one of the runner's locks (the grid's barrier, cubehip_timeouts_hold):
 * there it waits, and the Go side sends it again until the launch returns. A kernel
 * stopped inside a libc call (malloc of a region's slots, a printf's write) may leave
 * that call's lock held, as a fault there would. */
#define _GNU_SOURCE
#include "fault.h"

#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NCAUGHT ((int)(sizeof caught / sizeof caught[0]))
static struct sigaction previous[NCAUGHT]; /* what each was before; written before enabled */
static struct sigaction timeout_previous;  /* the time-out signal's, likewise */
static atomic_int enabled;                  /* the handlers are installed */

/* A guarded range of blocks in flight on this thread. */
typedef struct guard {
	sigjmp_buf env;
	cubehip_fault* f;
	cubehip_stop* stop; /* its launch's time limit, or NULL */
} guard;

/* Every thread that has run guarded ranges, for cubehip_stop_fire to find those running a
 * launch's blocks: a list that only grows (the runner's threads live as long as the
 * process; a Go thread that ends leaves an entry no launch runs on). */
typedef struct runner_thread {
	pid_t tid;
	_Atomic(cubehip_stop*) running; /* the limited launch whose range it runs, or NULL */
	struct runner_thread* next;
} runner_thread;
static _Atomic(runner_thread*) threads;

/* initial-exec: the handler reads these, and a thread's first access to a dynamic-model
 * thread-local (libcubehip.so) may allocate, which a handler must not. */
#define FAULT_TLS __thread __attribute__((tls_model("initial-exec")))
static FAULT_TLS guard* current; /* set only while this thread runs kernel code */
static FAULT_TLS int prepared;   /* prepare_thread has run on this thread */
static FAULT_TLS int abrt_blocked;
static FAULT_TLS runner_thread* self; /* this thread's entry in threads, once it ran a limited launch */
static FAULT_TLS int held;            /* cubehip_timeouts_hold */

static int timeout_signal(void) { return SIGRTMIN + 5; }

/* Whether the kernel's own code raised sig: a fault the CPU reported (si_code > 0), or
 * abort(), which raises SIGABRT at its own thread; never a signal sent by kill(2). */
static int raised_by_code(int sig, const siginfo_t* info) {
	if (sig == SIGABRT) return info->si_code == SI_TKILL && info->si_pid == getpid();
	return info->si_code > 0;
}

/* Hands sig to the handler installed before ours, as if ours were not there. */
static void forward(int sig, siginfo_t* info, void* uc) {
	int i = 0;
	while (i < NCAUGHT - 1 && caught[i] != sig) i++;
	const struct sigaction* p = &previous[i];
	if (p->sa_flags & SA_SIGINFO) {
		p->sa_sigaction(sig, info, uc);
	} else if (p->sa_handler == SIG_DFL) {
		/* The default action: a fault returns to its instruction and faults again under
		 * it; a sent signal is sent again, and acts once this handler returns. */
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		sigaction(sig, &d, NULL);
		if (info->si_code <= 0) raise(sig);
	} else if (p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
	}
}

/* The time-out signal: acts on a thread whose guarded range belongs to an expired launch
 * and holds no lock of the runner's; otherwise it was sent to a range that has ended (or
 * will be sent again), and one cubehip did not send goes on to Go's handler. */
static void on_timeout(int sig, siginfo_t* info, void* uc) {
	guard* g = current;
	int ours = info->si_code == SI_TKILL && info->si_pid == getpid();
	if (g == NULL || g->stop == NULL || held || !atomic_load(&g->stop->expired)) {
		if (!ours && timeout_previous.sa_handler != SIG_DFL && timeout_previous.sa_handler != SIG_IGN) {
			if (timeout_previous.sa_flags & SA_SIGINFO) timeout_previous.sa_sigaction(sig, info, uc);
			else timeout_previous.sa_handler(sig);
		}
		return;
	}
	current = NULL;
	g->f->signal = CUBEHIP_FAULT_TIMEOUT;
	g->f->code = 0;
	g->f->addr = 0;
	sigset_t mask = ((ucontext_t*)uc)->uc_sigmask;
	if (abrt_blocked) sigaddset(&mask, SIGABRT);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	siglongjmp(g->env, 1);
}

static void on_signal(int sig, siginfo_t* info, void* uc) {
	guard* g = current;
	if (g == NULL || !raised_by_code(sig, info)) {
		forward(sig, info, uc);
		return;
	}
	current = NULL;
	g->f->signal = sig;
	g->f->code = info->si_code;
	g->f->addr = sig == SIGABRT ? 0 : (uint64_t)(uintptr_t)info->si_addr;
	/* The mask the kernel ran with, as it was when the signal came: the guard saved none
	 * (a system call per range of blocks), and the handler's own mask blocks everything.
	 * abort() unblocks SIGABRT on its way; a thread that blocked it keeps it blocked. */
	sigset_t mask = ((ucontext_t*)uc)->uc_sigmask;
	if (abrt_blocked) sigaddset(&mask, SIGABRT);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	siglongjmp(g->env, 1);
}

/* Readies this thread for guarded kernels: an alternate signal stack where it has none
 * (the pool's workers; Go gives its own threads one), and the synchronous signals
 * unblocked (the workers block every signal, and a blocked SIGSEGV that an instruction
 * raises kills the process without calling any handler; Go's threads have them unblocked
 * already). */
static void prepare_thread(void) {
	stack_t ss;
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_DISABLE)) {
		size_t size = 64 * 1024;
		void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (p != MAP_FAILED) {
			ss.ss_sp = p;
			ss.ss_size = size;
			ss.ss_flags = 0;
			if (sigaltstack(&ss, NULL) != 0) munmap(p, size); /* then handlers run in place */
		}
	}
	sigset_t sync, now;
	sigemptyset(&sync);
	for (int i = 0; i < NCAUGHT; i++)
		if (caught[i] != SIGABRT) sigaddset(&sync, caught[i]);
	sigaddset(&sync, timeout_signal());
	pthread_sigmask(SIG_UNBLOCK, &sync, &now);
	abrt_blocked = sigismember(&now, SIGABRT) == 1;
	prepared = 1;
}

/* This thread's entry in threads, added at its first limited launch. */
static runner_thread* register_thread(void) {
	if (self) return self;
	runner_thread* t = calloc(1, sizeof *t);
	if (t == NULL) return NULL;
	t->tid = gettid();
	runner_thread* head = atomic_load(&threads);
	do t->next = head;
	while (!atomic_compare_exchange_weak(&threads, &head, t));
	self = t;
	return t;
}

cubehip_stop* cubehip_stop_new(void) { return calloc(1, sizeof(cubehip_stop)); }
void cubehip_stop_free(cubehip_stop* s) { free(s); }

void cubehip_stop_fire(cubehip_stop* s) {
	atomic_store(&s->expired, 1);
	pid_t pid = getpid();
	for (runner_thread* t = atomic_load(&threads); t; t = t->next)
		if (atomic_load(&t->running) == s) syscall(SYS_tgkill, pid, t->tid, timeout_signal());
}

void cubehip_timeouts_hold(int hold) { held = hold; }

void cubehip_faults_install(int on) {
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static int done;
	pthread_mutex_lock(&mu);
	if (!done && on) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_signal;
		/* SA_ONSTACK, as Go requires of every handler in its process; the whole mask, so
		 * no other handler runs on the alternate stack under this one. */
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigfillset(&sa.sa_mask);
		for (int i = 0; i < NCAUGHT; i++) {
			/* Read first, then replace: a signal between the two finds previous set. */
			sigaction(caught[i], NULL, &previous[i]);
			sigaction(caught[i], &sa, NULL);
		}
		sa.sa_sigaction = on_timeout;
		sigaction(timeout_signal(), NULL, &timeout_previous);
		sigaction(timeout_signal(), &sa, NULL);
		atomic_store(&enabled, 1);
	}
	done = 1;
	pthread_mutex_unlock(&mu);
}

/* The checker's inline shadow offset (jit/shadow.go sets it once reserved; 0 none). */
uint64_t cubehip_shadow_offset;

/* Clears the shadow of [lo, hi), memory of stacks. */
static void shadow_clear(uint64_t lo, uint64_t hi, uint64_t off) {
	if (hi <= lo) return;
	const uint64_t page = 4096, slo = (lo >> 3) + off, shi = (hi >> 3) + off;
	const uint64_t plo = (slo + page - 1) & ~(page - 1), phi = shi & ~(page - 1);
	if (phi > plo) {
		memset((void*)slo, 0, plo - slo);
		madvise((void*)plo, phi - plo, MADV_DONTNEED);
		memset((void*)phi, 0, shi - phi);
	} else {
		memset((void*)slo, 0, shi - slo);
	}
}

/* After a fault ended a range of blocks: a checked kernel's frames that the jump cut short
 * leave their local arrays' redzones marked in the shadow (their epilogues clear them,
 * and never ran), where the next checked kernel on this stack would read them as its own.
 * The thread's stack below this frame and the arena's fiber stacks are cleared: unmarked
 * memory is never reported, so clearing too much only forgets. */
static void forget_stack_marks(cubehip_arena* arena) {
	const uint64_t off = __atomic_load_n(&cubehip_shadow_offset, __ATOMIC_RELAXED);
	if (off == 0) return;
	pthread_attr_t at;
	void* lo;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &at) == 0) {
		if (pthread_attr_getstack(&at, &lo, &size) == 0)
			shadow_clear((uint64_t)lo, (uint64_t)__builtin_frame_address(0), off);
		pthread_attr_destroy(&at);
	}
	if (arena != NULL && arena->base != NULL)
		shadow_clear((uint64_t)arena->base, (uint64_t)arena->base + (uint64_t)CUBEHIP_MAX_THREADS * CUBEHIP_FIBER_STACK, off);
}

int cubehip_guarded(cubehip_entry_fn fn, const cubehip_launch* launch, uint64_t first, uint64_t end,
                    cubehip_arena* arena, cubehip_stop* stop, cubehip_fault* f) {
	if (!atomic_load_explicit(&enabled, memory_order_relaxed)) return fn(launch, first, end, arena);
	if (!prepared) prepare_thread();
	runner_thread* me = stop ? register_thread() : NULL;
	guard g;
	g.f = f;
	g.stop = me ? stop : NULL;
	/* No mask saved (0): on_signal restores the kernel's own before it jumps. */
	if (sigsetjmp(g.env, 0)) {
		if (me) atomic_store(&me->running, NULL);
		forget_stack_marks(arena);
		f->first = first;
		f->end = end;
		return CUBEHIP_FAULTED;
	}
	current = &g;
	if (me) {
		/* Published before expired is read, as cubehip_stop_fire stores expired before
		 * reading running: either this range sees the limit passed and does not start, or
		 * the signal finds it running. */
		atomic_store(&me->running, stop);
		if (atomic_load(&stop->expired)) {
			current = NULL;
			atomic_store(&me->running, NULL);
			f->signal = CUBEHIP_FAULT_TIMEOUT;
			f->code = 0;
			f->addr = 0;
			f->first = first;
			f->end = end;
			return CUBEHIP_FAULTED;
		}
	}
	int rc = fn(launch, first, end, arena);
	current = NULL;
	if (me) atomic_store(&me->running, NULL);
	return rc;
}
