// The launch queue: a ring of launch descriptors that Go fills without a cgo call and a
// C thread of the queue's own empties into cuLaunchKernel, so that while launches flow
// the caller's thread never waits for the driver. doc.go gives the contract, queue.go
// the producer and when a launch takes the queue, queue.c the consumer thread.
//
// One producer at a time (queue.go holds a mutex) and one consumer (the queue's thread).
// Each side writes its own cache line of indices and reads the other's only when its
// cached copy says the ring is empty (consumer) or full (producer): a launch moves the
// slot's lines between the cores, and nothing else.
#ifndef CUBEHIP_QUEUE_H
#define CUBEHIP_QUEUE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "driver.h"

// The ring's depth: deep enough that a producer refilling half a ring (queue.go's
// refillFree) wakes rarely, and shallow enough that a refusal still comes back within a
// millisecond of its launch (docs/benchmarks.md, "The launch queue"; hipsys.LaunchQueue
// promises it within Depth launches).
#define CUBEHIP_Q_SLOTS 256
// A slot is four cache lines: the most arguments and argument bytes a launch may carry
// to be queued. A launch with up to 48 bytes of arguments (a kernel with a few buffers
// and scalars) touches the slot's first two lines; one that does not fit is issued on
// the caller's thread instead, after the queue is drained (queue.go).
#define CUBEHIP_Q_ARGS 16
#define CUBEHIP_Q_BYTES 176

typedef struct {
	uintptr_t fn, stream;
	unsigned grid[3], block[3];
	unsigned shmem;
	unsigned short n;
	unsigned short offs[CUBEHIP_Q_ARGS];
	uint8_t buf[CUBEHIP_Q_BYTES] __attribute__((aligned(16)));
} cubehip_qslot;

_Static_assert(sizeof(cubehip_qslot) == 256, "cubehip_qslot is four cache lines");

typedef struct {
	// Written by the producer.
	uint64_t tail __attribute__((aligned(64))); // slots filled
	uint32_t run;                                // launches in a row with no other call between (queue.go)

	// Written by the consumer.
	uint64_t head __attribute__((aligned(64))); // slots issued
	uint64_t nfail;                              // launches the driver refused, ever

	// Written by the consumer when it parks and wakes: its own line, which the producer
	// reads on every launch and which stays in its cache while launches flow.
	uint32_t sleeping __attribute__((aligned(64))); // parked on cv; a producer that fills a slot wakes it
	uint32_t parks;                                  // times the thread has parked
	uint32_t kick;                                   // set under mu: wake with nothing to do yet (queue.go)

	// The least head a thread blocked in cubehip_q_wait waits for (0: none), written
	// under mu by the waiters and by the consumer, which wakes them on room.
	uint64_t waitfor __attribute__((aligned(64)));

	// Set at creation.
	cu_launch_kernel_fn launch __attribute__((aligned(64))); // cuLaunchKernel (a recording one in tests)
	int dev;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;   // the consumer parks on it
	pthread_cond_t room; // waiters for head park on it
	int status[CUBEHIP_Q_SLOTS]; // the refusal of the launch in each slot, 0 when issued
	cubehip_qslot ring[CUBEHIP_Q_SLOTS] __attribute__((aligned(64)));
} cubehip_queue;

// The queue each device's calls settle, or NULL while no queue of it is held.
extern cubehip_queue* cubehip_queues[CUBEHIP_MAX_DEVICES];

// cubehip_q_new starts device dev's queue, which issues launches through launch; 0 or
// an errno.
int cubehip_q_new(int dev, cu_launch_kernel_fn launch, cubehip_queue** out);

// cubehip_q_publish makes q the queue its device's calls settle, or, with on 0, none.
void cubehip_q_publish(cubehip_queue* q, int on);

// cubehip_q_wake wakes a parked consumer that has work; cubehip_q_kick wakes it with
// none yet, to take the launches of a loop that is starting (queue.go).
void cubehip_q_wake(cubehip_queue* q);
void cubehip_q_kick(cubehip_queue* q);

// cubehip_q_wait returns once the consumer has issued the launches below target: after
// a short spin, blocked, so that a producer waiting for room or a call waiting for the
// queue to drain leaves its core (and the consumer's, if they share one) to the work.
void cubehip_q_wait(cubehip_queue* q, uint64_t target);

// cubehip_q_drain waits until every launch filled into q so far has been issued.
void cubehip_q_drain(cubehip_queue* q);

// The spins of the queue's thread and of the stream waits (trampolines.c): a pause
// between loads, so a sibling hyperthread keeps its share of the core, and the clock
// that bounds them.
static inline void cubehip_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline uint64_t cubehip_now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// cubehip_q_settle is what every other driver call does first (trampolines.c's
// cubehip_ensure): a launch queued before it is issued before it, as if the caller had
// made it, so no call can overtake a queued launch on any stream; and the run of
// launches is broken.
static inline void cubehip_q_settle(cubehip_queue* q) {
	if (__atomic_load_n(&q->run, __ATOMIC_RELAXED)) __atomic_store_n(&q->run, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE) != __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE)) cubehip_q_drain(q);
}

#endif
