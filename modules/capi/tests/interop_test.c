/* interop_test.c: cubehip_buffer_device_pointer and the exchange without a host wait
 * (cubehip_buffer_order_before, cubehip_stream_wait_native, cubehip_device_export_stream),
 * on the device named by $CUBEHIP_PLATFORM (the cpu device by default). Built and run by interop_test.go against a freshly built
 * libcubehip.so; exits non-zero on the first failed check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

int main(void) {
	const char* platform = getenv("CUBEHIP_PLATFORM");
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	cubehip_device_props props = {.size = sizeof props};
	OK(cubehip_device_get_properties(dev, &props));

	uint32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
	cubehip_buffer a, b;
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &a));
	OK(cubehip_buffer_alloc(dev, 2, sizeof in, &b));
	OK(cubehip_buffer_write(a, 0, 0, in, sizeof in));

	uint64_t pa = 0, pb = 0, again = 0;
	OK(cubehip_buffer_device_pointer(a, &pa));
	OK(cubehip_buffer_device_pointer(b, &pb));
	OK(cubehip_buffer_device_pointer(a, &again));
	EXPECT(pa != 0, "address 0");
	EXPECT(pa == again, "the address moved: %#llx, then %#llx", (unsigned long long)pa, (unsigned long long)again);
	EXPECT(pa + sizeof in <= pb || pb + sizeof in <= pa, "live buffers overlap");

	if (strcmp(props.platform, "cpu") == 0) {
		/* The cpu device's memory is host memory: the address is the buffer's bytes. */
		OK(cubehip_buffer_sync(a));
		EXPECT(memcmp((const void*)(uintptr_t)pa, in, sizeof in) == 0, "the address does not hold what was written");
		uint32_t other[4] = {7, 8, 9, 10};
		memcpy((void*)(uintptr_t)pa, other, sizeof other);
		OK(cubehip_buffer_read(a, 0, 0, out, sizeof out));
		EXPECT(memcmp(out, other, sizeof out) == 0, "a write through the address is not what the buffer reads");
	}

	/* The exchange without a host wait. On a GPU another library's stream (here the
	 * device's export stream, which the test may also name) waits for the buffer's writes;
	 * the cpu platform has no such streams: 0 is a host wait, anything else is refused. */
	uint64_t exported = 1;
	if (strcmp(props.platform, "cpu") == 0) {
		OK(cubehip_buffer_order_before(a, 0));
		STATUS(cubehip_buffer_order_before(a, 7), CUBEHIP_ERROR_INVALID_ARGUMENT);
		EXPECT(strstr(cubehip_last_error(), "cubehip_buffer_order_before") != NULL, "message: %s", cubehip_last_error());
		STATUS(cubehip_stream_wait_native(dev, 0, 7), CUBEHIP_ERROR_INVALID_ARGUMENT);
		STATUS(cubehip_device_export_stream(dev, &exported), CUBEHIP_ERROR_INVALID_ARGUMENT);
		EXPECT(exported == 0, "a failed call left %#llx", (unsigned long long)exported);
		EXPECT(strncmp(cubehip_last_error(), "cubehip_device_export_stream: ", 30) == 0, "message: %s", cubehip_last_error());
		STATUS(cubehip_stream_wait_native(dev, 0, 7), CUBEHIP_ERROR_INVALID_ARGUMENT);
		EXPECT(strstr(cubehip_last_error(), "0x7") != NULL, "the message names the other library's stream: %s", cubehip_last_error());
	} else {
		OK(cubehip_device_export_stream(dev, &exported));
		uint64_t same = 0;
		OK(cubehip_device_export_stream(dev, &same));
		EXPECT(exported != 0 && exported == same, "export stream %#llx, then %#llx", (unsigned long long)exported, (unsigned long long)same);
		OK(cubehip_buffer_order_before(a, exported));
		OK(cubehip_stream_wait_native(dev, 2, exported));
	}
	STATUS(cubehip_device_export_stream(dev, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* Error paths: nothing is written through a NULL, a bad handle leaves *ptr 0. */
	STATUS(cubehip_buffer_device_pointer(a, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_buffer made_up = {.id = 0x7777};
	uint64_t p = 1;
	STATUS(cubehip_buffer_device_pointer(made_up, &p), CUBEHIP_ERROR_INVALID_HANDLE);
	EXPECT(p == 0, "a failed call left %#llx", (unsigned long long)p);
	OK(cubehip_buffer_release(b));
	p = 1;
	STATUS(cubehip_buffer_device_pointer(b, &p), CUBEHIP_ERROR_INVALID_HANDLE);
	EXPECT(p == 0, "a released buffer gave %#llx", (unsigned long long)p);
	STATUS(cubehip_buffer_order_before(made_up, 0), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_order_before(b, 0), CUBEHIP_ERROR_INVALID_HANDLE);
	cubehip_device no_device = {.id = 0x7778};
	STATUS(cubehip_stream_wait_native(no_device, 0, 0), CUBEHIP_ERROR_INVALID_HANDLE);
	OK(cubehip_buffer_release(a));
	OK(cubehip_device_close(dev));
	printf("interop (%s): %d checks passed\n", props.platform, checks);
	return 0;
}
