/* fault.h: a kernel that faults ends its launch, not the process (fault.c). */
#ifndef CUBEHIP_FAULT_H
#define CUBEHIP_FAULT_H
#include <stdint.h>
#include "prelude/cubehip_abi.h"

/* What ended a launch early: the signal a kernel raised on some thread of it, and the
 * range of blocks that thread was running. signal is 0 when nothing faulted. */
typedef struct cubehip_fault {
	int signal;
	int code;      /* si_code: which kind of SIGSEGV, SIGFPE, ... */
	uint64_t addr; /* si_addr: the address a memory fault touched, or the instruction's */
	uint64_t first, end;
} cubehip_fault;

/* cubehip_guarded's result for a range of blocks a fault ended. Not a hipError_t: the Go
 * side picks the status from the signal. */
#define CUBEHIP_FAULTED (-1)

/* cubehip_fault.signal of a range that a launch's time limit ended (no signal's number). */
#define CUBEHIP_FAULT_TIMEOUT 1000

/* A launch under a time limit: cubehip_stop_fire, called once the limit has passed (and
 * again now and then until the launch returns), marks it expired and interrupts each
 * thread running a range of its blocks with a signal of its own (SIGRTMIN + 5), whose
 * handler, in front of Go's as the fault handlers are, jumps back to the range's guard as
 * a fault does. A range that starts once it expired does not run. */
typedef struct cubehip_stop {
	_Atomic int expired;
} cubehip_stop;
cubehip_stop* cubehip_stop_new(void);
void cubehip_stop_fire(cubehip_stop* s);
void cubehip_stop_free(cubehip_stop* s);
/* While held (nonzero), this thread's time-out signal waits: the runner's own code that
 * kernels call (the grid's barrier) takes locks a jump must not leave held. */
void cubehip_timeouts_hold(int hold);

/* Installs the handlers of the signals a kernel can raise (once; later calls do nothing).
 * Before it, or with on == 0, kernels run unguarded and a fault kills the process. */
void cubehip_faults_install(int on);

/* Runs blocks [first, end) of a launch on this thread. A fault inside the kernel, or the
 * launch's time limit (stop, NULL for none), returns CUBEHIP_FAULTED with *f filled;
 * otherwise the entry's own result. */
int cubehip_guarded(cubehip_entry_fn fn, const cubehip_launch* launch, uint64_t first, uint64_t end,
                    cubehip_arena* arena, cubehip_stop* stop, cubehip_fault* f);
#endif
