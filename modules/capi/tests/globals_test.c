/* globals_test.c: a kernel's module variables through the C ABI, on the device named by
 * $CUBEHIP_PLATFORM (the cpu device by default): a __constant__ mask written from the
 * host and a __device__ counter read back, and the errors. Built and run by
 * globals_test.go; exits non-zero on the first failed check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"#include <hip/hip_runtime.h>\n"
	"__constant__ unsigned keep_mask[2];\n"
	"__device__ unsigned kept;\n"
	"extern \"C\" __global__ void masked(const unsigned* in, unsigned* out, unsigned n) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i >= n) return;\n"
	"  unsigned bit = i % 64u;\n"
	"  bool keep = (keep_mask[bit / 32u] >> (bit % 32u)) & 1u;\n"
	"  out[i] = keep ? in[i] : 0u;\n"
	"  if (keep) atomicAdd(&kept, 1u);\n"
	"}\n";


int main(void) {
	enum { N = 500 };
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	const cubehip_access acc[] = {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_WRITE};
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "masked", .block = {64, 1, 1}, .access = acc,
		.access_count = 2};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));

	uint64_t size = 99;
	OK(cubehip_kernel_global_size(k, "keep_mask", &size));
	EXPECT(size == 8, "keep_mask is %llu bytes", (unsigned long long)size);

	uint32_t in[N], out[N];
	for (int i = 0; i < N; i++) in[i] = 7u * (uint32_t)i + 1u;
	cubehip_buffer bin, bout;
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &bin));
	OK(cubehip_buffer_alloc(dev, 0, sizeof out, &bout));
	OK(cubehip_buffer_write(bin, 0, 0, in, sizeof in));
	const uint32_t masks[2][2] = {{0x0000ffffu, 0x00000001u}, {0x80000000u, 0xf0f0f0f0u}};
	for (int m = 0; m < 2; m++) {
		const uint32_t zero = 0;
		OK(cubehip_kernel_global_write(k, 0, "keep_mask", masks[m], sizeof masks[m]));
		OK(cubehip_kernel_global_write(k, 0, "kept", &zero, sizeof zero));
		const uint32_t g[3] = {(N + 63) / 64, 1, 1};
		cubehip_arg args[] = {buf_arg(bin), buf_arg(bout), {.kind = CUBEHIP_ARG_U32, .v.u64 = N}};
		OK(cubehip_launch(k, 0, g, args, 3));
		OK(cubehip_buffer_read(bout, 0, 0, out, sizeof out));
		uint32_t want_kept = 0;
		for (int i = 0; i < N; i++) {
			int bit = i % 64;
			uint32_t want = (masks[m][bit / 32] >> (bit % 32)) & 1u ? in[i] : 0u;
			want_kept += want != 0;
			EXPECT(out[i] == want, "mask %d: out[%d] = %u, want %u", m, i, out[i], want);
		}
		uint32_t kept = 0;
		OK(cubehip_kernel_global_read(k, 0, "kept", &kept, sizeof kept));
		EXPECT(kept == want_kept, "mask %d: kept %u, want %u", m, kept, want_kept);
	}

	/* Errors: unknown names, wrong sizes, NULLs, a made-up kernel. */
	uint32_t two[2] = {0, 0};
	STATUS(cubehip_kernel_global_write(k, 0, "keep_masks", two, sizeof two), 500 /* hipErrorNotFound */);
	EXPECT(strstr(cubehip_last_error(), "keep_masks") != NULL, "the error names the variable: %s", cubehip_last_error());
	STATUS(cubehip_kernel_global_size(k, "nope", &size), 500);
	STATUS(cubehip_kernel_global_write(k, 0, "keep_mask", two, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "keep_mask") != NULL, "the error names the variable: %s", cubehip_last_error());
	STATUS(cubehip_kernel_global_read(k, 0, "kept", two, 8), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_global_write(k, 0, NULL, two, 8), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_global_write(k, 0, "", two, 8), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_global_write(k, 0, "keep_mask", NULL, 8), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_global_read(k, 0, "kept", NULL, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_global_size(k, "kept", NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_kernel bogus = {.id = 0xdeadbeef};
	STATUS(cubehip_kernel_global_size(bogus, "kept", &size), CUBEHIP_ERROR_INVALID_HANDLE);

	OK(cubehip_buffer_release(bin));
	OK(cubehip_buffer_release(bout));
	OK(cubehip_kernel_destroy(k));
	OK(cubehip_device_close(dev));
	printf("globals_test: %d checks passed on %s\n", checks, platform);
	return 0;
}
