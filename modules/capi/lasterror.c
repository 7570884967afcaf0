/* The calling thread's last error message: thread-local, as cudaGetLastError's state is,
 * so that two threads failing at once each read their own message. Go code that fails a
 * call runs on the calling C thread (cgo runs an exported function on the thread that
 * called it), so the store below lands in that thread's slot.
 *
 * The message lives in a heap buffer the thread grows as it needs. A host thread that
 * failed a call and exits would leave that buffer behind, and a host that runs a thread
 * per request would leak one per thread: a pthread key with a destructor frees it when
 * the thread exits. The thread-local pointer stays the fast path; the key is set once per
 * thread, when its buffer is first allocated. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "capi.h"

static _Thread_local char* last_msg;
static _Thread_local size_t last_cap;

static pthread_key_t last_key;
static pthread_once_t last_once = PTHREAD_ONCE_INIT;
static int last_key_ok;
/* Message buffers allocated and not yet freed, over all threads: read by the tests only
 * (capi_debug_last_error_buffers), to show that exiting threads give theirs back. */
static atomic_long live_buffers;

static void free_last(void* p) {
	free(p);
	atomic_fetch_sub(&live_buffers, 1);
	/* A destructor of another key may still call into the library on this thread: it
	 * starts over with a fresh buffer (and sets the key again, so that one is freed too). */
	last_msg = NULL;
	last_cap = 0;
}

static void make_key(void) { last_key_ok = pthread_key_create(&last_key, free_last) == 0; }

void capi_set_last_error(const char* msg, size_t n) {
	if (n + 1 > last_cap) {
		size_t cap = last_cap ? last_cap : 256;
		while (cap < n + 1) cap *= 2;
		char* p = realloc(last_msg, cap);
		if (p == NULL) {
			/* Keep what fits rather than nothing: a truncated message is still a message. */
			if (last_cap == 0) return;
			n = last_cap - 1;
		} else {
			if (last_msg == NULL) {
				atomic_fetch_add(&live_buffers, 1);
				pthread_once(&last_once, make_key);
			}
			if (last_key_ok) pthread_setspecific(last_key, p);
			last_msg = p;
			last_cap = cap;
		}
	}
	memcpy(last_msg, msg, n);
	last_msg[n] = 0;
}

void capi_clear_last_error(void) {
	if (last_msg != NULL) last_msg[0] = 0;
}

const char* cubehip_last_error(void) { return last_msg != NULL ? last_msg : ""; }

/* For the tests only, not part of the C ABI (include/cubehip.h does not declare it). */
long capi_debug_last_error_buffers(void) { return atomic_load(&live_buffers); }
