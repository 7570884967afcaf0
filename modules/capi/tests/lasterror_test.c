/* lasterror_test.c: the calling thread's last error (include/cubehip.h): emptied by a call
 * that succeeds, kept by cubehip_device_count's answer of 0 devices, and given back when a
 * thread that failed a call exits. Built and run by lasterror_test.go against a freshly
 * built libcubehip.so; exits non-zero on the first failed check. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

/* The library's count of live message buffers: for the tests only, declared here since
 * the public header does not carry it. */
extern long capi_debug_last_error_buffers(void);

static void* fail_and_exit(void* arg) {
	(void)arg;
	cubehip_buffer zero = {0};
	/* A long message, so the buffer is a real allocation of the thread's, not a small one. */
	if (cubehip_buffer_check(zero) == CUBEHIP_SUCCESS || cubehip_last_error()[0] == 0) return (void*)1;
	return NULL;
}

int main(void) {
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";

	/* A success empties the message a failure left. */
	cubehip_buffer zero = {0};
	STATUS(cubehip_buffer_check(zero), CUBEHIP_ERROR_INVALID_HANDLE);
	EXPECT(strstr(cubehip_last_error(), "zero handle") != NULL, "the failure's message: %s", cubehip_last_error());
	/* Neither the status's name nor the version is a call that empties it: a host prints
	 * both in one printf, whose arguments are evaluated in no set order. */
	EXPECT(cubehip_status_string(CUBEHIP_ERROR_INVALID_HANDLE) != NULL && cubehip_version() > 0, "name, version");
	EXPECT(cubehip_last_error()[0] != 0, "cubehip_status_string or cubehip_version emptied the message");
	int32_t n = -1;
	OK(cubehip_device_count(platform, &n));
	EXPECT(cubehip_last_error()[0] == 0, "the message after a success: %s", cubehip_last_error());
	/* The one success that leaves a message: 0 devices, and why. */
	EXPECT(cubehip_device_count("no-such-platform", &n) == CUBEHIP_SUCCESS && n == 0, "an unknown platform: %d devices", n);
	EXPECT(strstr(cubehip_last_error(), "no-such-platform") != NULL, "the reason for 0 devices: %s", cubehip_last_error());

	/* Threads that fail a call and exit give their message buffers back: the count of live
	 * buffers returns to where it was, however many threads came and went. */
	long before = capi_debug_last_error_buffers();
	enum { ROUNDS = 20, T = 16 };
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t th[T];
		for (int i = 0; i < T; i++) EXPECT(pthread_create(&th[i], NULL, fail_and_exit, NULL) == 0, "pthread_create");
		for (int i = 0; i < T; i++) {
			void* res = NULL;
			pthread_join(th[i], &res);
			EXPECT(res == NULL, "a thread's failed call left no message");
		}
	}
	long after = capi_debug_last_error_buffers();
	EXPECT(after == before, "%d threads came and went: %ld message buffers live before, %ld after", ROUNDS * T,
		before, after);
	printf("lasterror_test: %d checks passed on %s\n", checks, platform);
	return 0;
}
