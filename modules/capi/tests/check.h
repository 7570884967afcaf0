/* check.h: the checks the C tests of the ABI share. EXPECT counts a check and, when it
 * fails, prints where, what and the calling thread's last error, then exits non-zero:
 * the first failure ends the test, so the output names it alone. Include it after
 * <cubehip.h>; each test prints `checks` when it passes. */
#ifndef CUBEHIP_TESTS_CHECK_H
#define CUBEHIP_TESTS_CHECK_H

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

/* STATUS checks that call returns want, naming both statuses when it does not. */
#define STATUS(call, want)                                                                    \
	do {                                                                                      \
		cubehip_status got_ = (call);                                                         \
		EXPECT(got_ == (want), "%s returned %s (%d), want %s", #call,                         \
			cubehip_status_string(got_), (int)got_, cubehip_status_string(want));             \
	} while (0)
#define OK(call) STATUS(call, CUBEHIP_SUCCESS)

#endif
