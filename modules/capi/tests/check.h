/* check.h: what the C tests of the ABI share: the checks and two argument builders.
 * EXPECT counts a check and, when it fails, prints where, what and the calling thread's
 * last error, then exits non-zero: the first failure ends the test, so the output names
 * it alone. Each test prints `checks` when it passes. */
#ifndef CUBEHIP_TESTS_CHECK_H
#define CUBEHIP_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cubehip.h>

static int checks;

#define EXPECT(cond, ...)                                                                     \
	do {                                                                                      \
		checks++;                                                                             \
		if (!(cond)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);          \
			fprintf(stderr, __VA_ARGS__);                                                     \
			fprintf(stderr, " (last error: %s)\n", cubehip_last_error());                     \
			exit(1);                                                                          \
		}                                                                                     \
	} while (0)

/* STATUS checks that call returns want, naming both statuses when it does not, and that
 * the thread's last error agrees: a message after a failure (a failing call that forgot
 * its message leaves the host nothing to report), "" after a success (a stale message
 * would be read as this call's). */
#define STATUS(call, want)                                                                    \
	do {                                                                                      \
		cubehip_status got_ = (call);                                                         \
		EXPECT(got_ == (want), "%s returned %s (%d), want %s", #call,                         \
			cubehip_status_string(got_), (int)got_, cubehip_status_string(want));             \
		if (got_ == CUBEHIP_SUCCESS)                                                          \
			EXPECT(cubehip_last_error()[0] == 0, "%s succeeded, and left a message", #call);  \
		else                                                                                  \
			EXPECT(cubehip_last_error()[0] != 0, "%s failed without a message", #call);       \
	} while (0)
#define OK(call) STATUS(call, CUBEHIP_SUCCESS)

/* Launch arguments the tests pass often: a whole buffer, an unsigned scalar. */
static inline cubehip_arg buf_arg(cubehip_buffer b) { return cubehip_arg_buffer(b); }
static inline cubehip_arg u32_arg(uint32_t v) { return cubehip_arg_u32(v); }

#endif
