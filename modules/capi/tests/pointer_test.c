/* pointer_test.c: raw device addresses as launch arguments (CUBEHIP_ARG_POINTER) and
 * cubehip_buffer_at, on the device named by $CUBEHIP_PLATFORM (the cpu device by default).
 * An address inside a live buffer is taken, and the launch's writes are that buffer's; any
 * other address is refused, naming it, with nothing queued. Built and run by
 * pointer_test.go against a freshly built libcubehip.so; exits non-zero on the first failed
 * check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"extern \"C\" __global__ void fill(float* p, float v, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) p[i] = v;\n"
	"}\n";

int main(void) {
	const char* platform = getenv("CUBEHIP_PLATFORM");
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));

	float zeros[64] = {0}, out[64];
	cubehip_buffer a, other;
	OK(cubehip_buffer_alloc(dev, 0, sizeof zeros, &a));
	OK(cubehip_buffer_alloc(dev, 0, sizeof zeros, &other));
	OK(cubehip_buffer_write(a, 0, 0, zeros, sizeof zeros));
	uint64_t pa = 0;
	OK(cubehip_buffer_device_pointer(a, &pa));

	/* The lookup: the buffer's own handle and the byte. */
	cubehip_buffer found = {0};
	uint64_t off = 1;
	OK(cubehip_buffer_at(dev, pa + 20, &found, &off));
	EXPECT(found.id == a.id && off == 20, "found %#llx at %llu", (unsigned long long)found.id, (unsigned long long)off);
	OK(cubehip_buffer_at(dev, pa, &found, &off));
	EXPECT(found.id == a.id && off == 0, "the first byte: %#llx at %llu", (unsigned long long)found.id, (unsigned long long)off);
	OK(cubehip_buffer_at(dev, pa + sizeof zeros - 1, &found, &off));
	EXPECT(found.id == a.id && off == sizeof zeros - 1, "the last byte: at %llu", (unsigned long long)off);

	/* A launch through an address 16 floats into the buffer writes those 16 only. */
	cubehip_kernel k;
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "fill", .block = {16, 1, 1}};
	OK(cubehip_kernel_create(dev, &d, &k));
	uint32_t g[3] = {1, 1, 1};
	cubehip_arg args[] = {cubehip_arg_pointer(pa + 16 * sizeof(float)), cubehip_arg_f32(3.0f), cubehip_arg_i32(16)};
	OK(cubehip_launch(k, 0, g, args, 3));
	OK(cubehip_buffer_read(a, 0, 0, out, sizeof out));
	for (int i = 0; i < 64; i++) {
		float want = i >= 16 && i < 32 ? 3.0f : 0.0f;
		EXPECT(out[i] == want, "out[%d] = %g, want %g", i, out[i], want);
	}

	/* Refused, each naming the address, nothing queued: 0, a stack address (host memory
	 * the library neither allocated nor imported), a released buffer's memory. */
	STATUS(cubehip_buffer_at(dev, 0, &found, &off), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(found.id == 0 && off == 0, "a failed lookup left %#llx at %llu", (unsigned long long)found.id, (unsigned long long)off);
	float local[4];
	uint64_t stack = (uint64_t)(uintptr_t)local;
	STATUS(cubehip_buffer_at(dev, stack, &found, &off), CUBEHIP_ERROR_INVALID_ARGUMENT);
	char hexaddr[32];
	snprintf(hexaddr, sizeof hexaddr, "%#llx", (unsigned long long)stack);
	EXPECT(strstr(cubehip_last_error(), hexaddr) != NULL, "the message names the address %s: %s", hexaddr, cubehip_last_error());
	args[0] = cubehip_arg_pointer(stack);
	STATUS(cubehip_launch(k, 0, g, args, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "argument 0") != NULL && strstr(cubehip_last_error(), hexaddr) != NULL,
	       "the launch's message names the argument and the address: %s", cubehip_last_error());

	uint64_t po = 0;
	OK(cubehip_buffer_device_pointer(other, &po));
	OK(cubehip_buffer_at(dev, po + 4, &found, &off));
	EXPECT(found.id == other.id && off == 4, "the second buffer: %#llx at %llu", (unsigned long long)found.id, (unsigned long long)off);
	OK(cubehip_buffer_release(other));
	STATUS(cubehip_buffer_at(dev, po + 4, &found, &off), CUBEHIP_ERROR_INVALID_ARGUMENT);
	args[0] = cubehip_arg_pointer(po);
	STATUS(cubehip_launch(k, 0, g, args, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* NULL outputs and a handle that is no device. */
	STATUS(cubehip_buffer_at(dev, pa, NULL, &off), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_at(dev, pa, &found, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_device made_up = {.id = 0x7777};
	STATUS(cubehip_buffer_at(made_up, pa, &found, &off), CUBEHIP_ERROR_INVALID_HANDLE);

	/* A buffer of another device: its address is not this device's. */
	cubehip_device dev2;
	if (cubehip_device_open(platform, 0, NULL, &dev2) == CUBEHIP_SUCCESS) {
		STATUS(cubehip_buffer_at(dev2, pa, &found, &off), CUBEHIP_ERROR_INVALID_ARGUMENT);
		OK(cubehip_device_close(dev2));
	}

	OK(cubehip_kernel_destroy(k));
	OK(cubehip_buffer_release(a));
	OK(cubehip_device_close(dev));
	printf("pointer_test: checks passed\n");
	return 0;
}
