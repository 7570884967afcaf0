/* peer_test.c: the several-device functions of include/cubehip.h on three cpu devices
 * (capi_test.go sets CUBEHIP_CPU_DEVICES=3): peer reachability, and copies between
 * devices in every direction with their error paths. Exits non-zero on the first failed
 * check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

enum { DEVICES = 3, N = 1 << 16 };

int main(void) {
	int32_t count = 0;
	OK(cubehip_device_count("cpu", &count));
	EXPECT(count == DEVICES, "%d devices", count);

	int32_t ok = -1;
	OK(cubehip_device_can_access_peer("cpu", 0, 2, &ok));
	EXPECT(ok == 1, "0 reaches 2: %d", ok);
	OK(cubehip_device_can_access_peer("cpu", 1, 1, &ok));
	EXPECT(ok == 0, "a device is not its own peer: %d", ok);
	STATUS(cubehip_device_can_access_peer("cpu", 0, DEVICES, &ok), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_device_can_access_peer("cpu", 0, 1, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);

	cubehip_device dev[DEVICES];
	cubehip_buffer buf[DEVICES];
	static uint32_t in[N], out[N];
	for (int d = 0; d < DEVICES; d++) {
		OK(cubehip_device_open("cpu", d, NULL, &dev[d]));
		OK(cubehip_buffer_alloc(dev[d], 0, sizeof in, &buf[d]));
	}

	int32_t peers[DEVICES];
	OK(cubehip_device_peers(dev[1], peers, DEVICES, &count));
	EXPECT(count == 2 && peers[0] == 0 && peers[1] == 2, "peers of 1: %d (%d, %d)", count, peers[0], peers[1]);
	STATUS(cubehip_device_peers(dev[1], peers, 1, &count), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(count == 2, "count says how many to make room for: %d", count);
	STATUS(cubehip_device_peers(dev[1], NULL, 2, &count), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* Every direction, the same device included. */
	for (int s = 0; s < DEVICES; s++) {
		for (int d = 0; d < DEVICES; d++) {
			for (int i = 0; i < N; i++) in[i] = (uint32_t)(i * 7 + s * 100 + d);
			OK(cubehip_buffer_write(buf[s], 0, 0, in, sizeof in));
			if (s != d) OK(cubehip_buffer_copy_from(buf[d], 3, buf[s]));
			memset(out, 0, sizeof out);
			OK(cubehip_buffer_read(buf[d], 0, 0, out, sizeof out));
			EXPECT(memcmp(in, out, sizeof in) == 0, "copy %d to %d", s, d);
		}
	}

	cubehip_buffer small;
	OK(cubehip_buffer_alloc(dev[2], 0, 16, &small));
	STATUS(cubehip_buffer_copy_from(small, 0, buf[0]), CUBEHIP_ERROR_INVALID_ARGUMENT);
	OK(cubehip_buffer_release(small));
	STATUS(cubehip_buffer_copy_from(small, 0, buf[0]), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_copy_from(buf[0], 0, small), CUBEHIP_ERROR_INVALID_HANDLE);

	for (int d = 0; d < DEVICES; d++) {
		OK(cubehip_buffer_release(buf[d]));
		OK(cubehip_device_close(dev[d]));
	}
	printf("peer_test: %d checks passed\n", checks);
	return 0;
}
