// The launch queue's consumer thread and the waits on it (queue.h).
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

// How long the consumer spins on an empty ring before it parks. A launch loop's gaps
// (the caller's bookkeeping, a few microseconds of its own work between launches of 3.3
// µs on an H200) stay well inside it, so a flowing loop never pays a wake-up, which
// takes tens of microseconds on a virtual machine's idle CPU; an idle queue costs no CPU
// past it. No sweep measured it: any value well above a loop's gaps and well below what
// a caller would notice as a busy core does the same.
#define CUBEHIP_Q_SPIN_NS 100000

// How often the consumer publishes head while the ring is not empty, in launches. A
// producer waiting for room polls head's line, and each store that finds it shared costs
// the consumer a coherence round trip, which the driver's next locked instruction waits
// for; a waiter (drain, settle) needs only the last store, made whenever the ring looks
// empty. The queue's launch loop measured level with the raw driver's C loop with this
// value (docs/benchmarks.md, "The launch queue"); no other value was measured on its
// own, and a refusal or room is seen at most 15 launches late.
#define CUBEHIP_Q_PUBLISH_EVERY 16

// How many times cubehip_q_wait polls head before it blocks: a few microseconds (a
// pause instruction is 10-140 cycles, by CPU), a launch or two of driver work, so that a
// drain that finds the last launch in the driver returns without a sleep and a wake-up.
// No sweep measured it.
#define CUBEHIP_Q_WAIT_SPINS 2048

// wait_fill returns the tail once it is past head: after spinning, parked on cv, with
// sleeping set first so that a producer that fills a slot after the check below sees it
// and wakes the thread (queue.go's Launch stores tail, then reads sleeping; here sleeping
// is stored, then tail read: with both sequentially consistent, one sees the other).
static uint64_t wait_fill(cubehip_queue* q, uint64_t head) {
	uint64_t start = 0;
	for (unsigned i = 1;; i++) {
		uint64_t tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		if (tail != head) return tail;
		cubehip_cpu_relax();
		if ((i & 255) == 0) {
			uint64_t t = cubehip_now_ns();
			if (start == 0) start = t;
			else if (t - start > CUBEHIP_Q_SPIN_NS) break;
		}
	}
	uint64_t tail;
	pthread_mutex_lock(&q->mu);
	__atomic_add_fetch(&q->parks, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->sleeping, 1, __ATOMIC_SEQ_CST);
	while ((tail = __atomic_load_n(&q->tail, __ATOMIC_SEQ_CST)) == head && !q->kick)
		pthread_cond_wait(&q->cv, &q->mu);
	// Kicked, the thread comes back with nothing to do yet and spins for it (the
	// caller's loop below), while the producer goes on launching directly until it
	// sees the thread awake: the wake-up's latency is hidden, not waited for.
	q->kick = 0;
	__atomic_store_n(&q->sleeping, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&q->mu);
	return tail;
}

static void* consume(void* arg) {
	cubehip_queue* q = arg;
	cubehip_tls_dev = q->dev;
	uint64_t head = 0, tail = 0;
	for (;;) {
		while (head == tail) tail = wait_fill(q, head);
		cubehip_qslot* s = &q->ring[head % CUBEHIP_Q_SLOTS];
		if (head + 1 != tail) {
			// The next slot's lines travel from the producer's core while the driver works.
			cubehip_qslot* next = &q->ring[(head + 1) % CUBEHIP_Q_SLOTS];
			__builtin_prefetch(next);
			__builtin_prefetch((char*)next + 64);
		}
		void* params[CUBEHIP_Q_ARGS];
		for (int i = 0; i < s->n; i++) params[i] = s->buf + s->offs[i];
		CUresult r = cubehip_ensure_ctx();
		if (r == 0)
			r = q->launch((CUfunction)s->fn, s->grid[0], s->grid[1], s->grid[2], s->block[0],
				s->block[1], s->block[2], s->shmem, (CUstream)s->stream, s->n > 0 ? params : NULL, NULL);
		if (r) {
			q->status[head % CUBEHIP_Q_SLOTS] = r;
			__atomic_add_fetch(&q->nfail, 1, __ATOMIC_RELEASE);
		}
		head++;
		// Published every CUBEHIP_Q_PUBLISH_EVERY launches, and whenever the ring looks
		// empty, before this thread looks for more work.
		if (head == tail || head % CUBEHIP_Q_PUBLISH_EVERY == 0) {
			// Sequentially consistent, then waitfor read: cubehip_q_wait stores waitfor
			// and then reads head, so either it sees this head or this sees it waiting.
			__atomic_store_n(&q->head, head, __ATOMIC_SEQ_CST);
			uint64_t w = __atomic_load_n(&q->waitfor, __ATOMIC_SEQ_CST);
			if (w && head >= w) {
				pthread_mutex_lock(&q->mu);
				__atomic_store_n(&q->waitfor, 0, __ATOMIC_SEQ_CST);
				pthread_cond_broadcast(&q->room);
				pthread_mutex_unlock(&q->mu);
			}
		}
	}
}

// cubehip_q_new: the queue and its thread last as long as the process, as the driver's
// own threads do: parked, the thread costs nothing. The thread blocks every signal: it
// never runs Go code, and a signal meant for the Go runtime is then delivered to one of
// the runtime's own threads.
int cubehip_q_new(int dev, cu_launch_kernel_fn launch, cubehip_queue** out) {
	cubehip_queue* q = NULL;
	if (posix_memalign((void**)&q, 64, sizeof *q)) return ENOMEM;
	memset(q, 0, sizeof *q);
	q->dev = dev;
	q->launch = launch;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	pthread_cond_init(&q->room, NULL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&q->thread, NULL, consume, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&q->room);
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return err;
	}
	*out = q;
	return 0;
}

// cubehip_q_publish: a queue is published while it is held, so that with none held a
// call reads one pointer and nothing more. The holder unpublishes a settled queue, so a call
// that read the pointer just before finds nothing to wait for.
void cubehip_q_publish(cubehip_queue* q, int on) {
	__atomic_store_n(&cubehip_queues[q->dev], on ? q : NULL, __ATOMIC_RELEASE);
}

void cubehip_q_kick(cubehip_queue* q) {
	pthread_mutex_lock(&q->mu);
	q->kick = 1;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void cubehip_q_wake(cubehip_queue* q) {
	pthread_mutex_lock(&q->mu);
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void cubehip_q_wait(cubehip_queue* q, uint64_t target) {
	for (unsigned i = 0; i < CUBEHIP_Q_WAIT_SPINS; i++) {
		if (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE) >= target) return;
		cubehip_cpu_relax();
	}
	pthread_mutex_lock(&q->mu);
	while (__atomic_load_n(&q->head, __ATOMIC_SEQ_CST) < target) {
		uint64_t w = __atomic_load_n(&q->waitfor, __ATOMIC_SEQ_CST);
		if (w == 0 || w > target) __atomic_store_n(&q->waitfor, target, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&q->head, __ATOMIC_SEQ_CST) >= target) break;
		pthread_cond_wait(&q->room, &q->mu);
	}
	pthread_mutex_unlock(&q->mu);
}

void cubehip_q_drain(cubehip_queue* q) { cubehip_q_wait(q, __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE)); }
