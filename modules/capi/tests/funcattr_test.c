/* funcattr_test.c: a kernel's function attributes through the C ABI, on the device named
 * by $CUBEHIP_PLATFORM (the cpu device by default): the attributes read, the dynamic
 * shared-memory limit lowered (a launch over it refused naming both limits) and raised (a
 * launch of 64 KiB, more than CUDA's default 48 KiB, running), a value over the device's
 * refused. Built and run by funcattr_test.go; exits non-zero on the first failed check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"#include <hip/hip_runtime.h>\n"
	"extern \"C\" __global__ void window(const float* in, float* out, unsigned words) {\n"
	"  extern __shared__ float w[];\n"
	"  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) w[i] = in[i];\n"
	"  __syncthreads();\n"
	"  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) out[i] = w[words - 1 - i];\n"
	"}\n";

int main(void) {
	enum { SHARED = 64 << 10, WORDS = SHARED / 4 };
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	cubehip_device_props props = {.size = sizeof props};
	OK(cubehip_device_get_properties(dev, &props));

	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "window", .block = {64, 1, 1}, .shared_mem = SHARED};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));
	int v = -1;
	OK(cubehip_kernel_get_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &v));
	EXPECT(v > 0, "max threads per block %d", v);
	OK(cubehip_kernel_get_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_NUM_REGS, &v));
	STATUS(cubehip_kernel_get_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_NUM_REGS, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_get_attribute(k, (cubehip_func_attribute)42, &v), CUBEHIP_ERROR_INVALID_ARGUMENT);

	static float in[WORDS], out[WORDS];
	for (int i = 0; i < WORDS; i++) in[i] = (float)i;
	cubehip_buffer bin, bout;
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &bin));
	OK(cubehip_buffer_alloc(dev, 0, sizeof out, &bout));
	OK(cubehip_buffer_write(bin, 0, 0, in, sizeof in));
	cubehip_arg args[] = {buf_arg(bin), buf_arg(bout), cubehip_arg_u32(WORDS)};
	const uint32_t g[3] = {1, 1, 1};

	/* Lowered: the launch of 64 KiB is refused, naming the kernel's limit and the device's. */
	OK(cubehip_kernel_set_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
	OK(cubehip_kernel_get_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &v));
	EXPECT(v == 1024, "the limit reads %d", v);
	STATUS(cubehip_launch(k, 0, g, args, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "over the kernel's limit of 1024") != NULL, "the message names the kernel's limit: %s", cubehip_last_error());
	EXPECT(strstr(cubehip_last_error(), "SharedMemPerBlockOptin") != NULL, "the message names the device's limit");

	/* Raised: the launch gets all 64 KiB. */
	OK(cubehip_kernel_set_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, SHARED));
	OK(cubehip_launch(k, 0, g, args, 3));
	OK(cubehip_buffer_read(bout, 0, 0, out, sizeof out));
	for (int i = 0; i < WORDS; i++) {
		if (out[i] != in[WORDS - 1 - i]) {
			EXPECT(0, "element %d is %g, want %g", i, (double)out[i], (double)in[WORDS - 1 - i]);
			break;
		}
	}

	/* Over what the device can give, and an attribute that cannot be set. */
	STATUS(cubehip_kernel_set_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 30), CUBEHIP_HIP_ERROR_INVALID_VALUE);
	STATUS(cubehip_kernel_set_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_NUM_REGS, 1), CUBEHIP_HIP_ERROR_INVALID_VALUE);
	OK(cubehip_kernel_set_attribute(k, CUBEHIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));

	OK(cubehip_buffer_release(bin));
	OK(cubehip_buffer_release(bout));
	OK(cubehip_kernel_destroy(k));
	OK(cubehip_device_close(dev));
	printf("%d checks passed\n", checks);
	return 0;
}
