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

/* The kernel checker's reports the last error carries (cubehip_last_check_reports): a
 * heap block per thread, made the first time a thread's error carries reports (static
 * thread-local storage is scarce in a library loaded at run time), set with the message
 * and cleared with it, and freed when the thread exits. */
#define CAPI_MAX_REPORTS 16
typedef struct reports {
	size_t n, total;
	cubehip_check_report r[CAPI_MAX_REPORTS];
} reports;
static _Thread_local reports* last_rep;
static pthread_key_t rep_key;
static pthread_once_t rep_once = PTHREAD_ONCE_INIT;
static int rep_key_ok;

static void free_rep(void* p) {
	free(p);
	last_rep = NULL;
}

static void make_rep_key(void) { rep_key_ok = pthread_key_create(&rep_key, free_rep) == 0; }

void capi_set_last_reports(const cubehip_check_report* r, size_t n, size_t total) {
	if (n > CAPI_MAX_REPORTS) n = CAPI_MAX_REPORTS;
	if (n == 0) {
		if (last_rep != NULL) last_rep->n = last_rep->total = 0;
		return;
	}
	if (last_rep == NULL) {
		last_rep = malloc(sizeof *last_rep);
		if (last_rep == NULL) return; /* the message still says it all */
		pthread_once(&rep_once, make_rep_key);
		if (rep_key_ok) pthread_setspecific(rep_key, last_rep);
	}
	memcpy(last_rep->r, r, n * sizeof *r);
	last_rep->n = n;
	last_rep->total = total;
}

void capi_get_last_reports(cubehip_check_report* out, size_t cap, size_t* count, size_t* total) {
	size_t have = last_rep != NULL ? last_rep->n : 0;
	size_t n = have < cap ? have : cap;
	for (size_t i = 0; i < n; i++) {
		/* What the host's struct has room for, its own size field kept. */
		size_t host = out[i].size;
		size_t want = host < sizeof last_rep->r[i] ? host : sizeof last_rep->r[i];
		if (want > sizeof(size_t))
			memcpy((char*)&out[i] + sizeof(size_t), (const char*)&last_rep->r[i] + sizeof(size_t), want - sizeof(size_t));
		out[i].size = host;
	}
	*count = n;
	*total = n > 0 ? last_rep->total : 0;
}

void capi_clear_last_error(void) {
	if (last_msg != NULL) last_msg[0] = 0;
	if (last_rep != NULL) last_rep->n = last_rep->total = 0;
}

const char* cubehip_last_error(void) { return last_msg != NULL ? last_msg : ""; }

/* For the tests only, not part of the C ABI (include/cubehip.h does not declare it). */
long capi_debug_last_error_buffers(void) { return atomic_load(&live_buffers); }
