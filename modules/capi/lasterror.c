/* The calling thread's last error message: thread-local, as cudaGetLastError's state is,
 * so that two threads failing at once each read their own message. Go code that fails a
 * call runs on the calling C thread (cgo runs an exported function on the thread that
 * called it), so the store below lands in that thread's slot. */
#include <stdlib.h>
#include <string.h>

#include "capi.h"

static _Thread_local char* last_msg;
static _Thread_local size_t last_cap;

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
			last_msg = p;
			last_cap = cap;
		}
	}
	memcpy(last_msg, msg, n);
	last_msg[n] = 0;
}

const char* cubehip_last_error(void) { return last_msg != NULL ? last_msg : ""; }
