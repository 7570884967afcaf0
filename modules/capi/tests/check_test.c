/* check_test.c: the kernel checker from C (cubehip_device_options.check): a stencil that
 * reads one element before its input is reported at the sync, and the report reads back as
 * structured data through cubehip_last_check_reports; the fixed kernel runs clean. On the
 * cpu device (the only one that checks kernels): another platform refuses to open with a
 * check, saying to run on the cpu device. Built and run by check_test.go against a freshly
 * built libcubehip.so; exits non-zero on the first failed check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"extern \"C\" __global__ void blur(const float* in, float* out, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) out[i] = (in[i - 1] + in[i]) / 2.0f;\n"
	"}\n"
	"extern \"C\" __global__ void blur_fixed(const float* in, float* out, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i > 0 && i < n) out[i] = (in[i - 1] + in[i]) / 2.0f;\n"
	"}\n";

int main(void) {
	const char* platform = getenv("CUBEHIP_PLATFORM");
	cubehip_device_options o = {.size = sizeof o, .check = "memcheck,synccheck", .cache_dir = "-"};
	cubehip_device dev;
	cubehip_status st = cubehip_device_open(platform, 0, &o, &dev);
	/* A GPU platform, named or the default on a machine with one, refuses the check and says
	 * to run on the cpu device. */
	int gpu = platform != NULL && strcmp(platform, "cpu") != 0;
	if (platform == NULL && st == CUBEHIP_ERROR_INVALID_ARGUMENT && strstr(cubehip_last_error(), "cpu device") != NULL) gpu = 1;
	if (gpu) {
		EXPECT(st == CUBEHIP_ERROR_INVALID_ARGUMENT && strstr(cubehip_last_error(), "cpu device") != NULL,
		       "a GPU platform must refuse a check: %d %s", st, cubehip_last_error());
		printf("check_test: checks passed (refused on %s)\n", platform != NULL ? platform : "the default platform");
		return 0;
	}
	OK(st);

	float in[64];
	for (int i = 0; i < 64; i++) in[i] = (float)i;
	cubehip_buffer a, b;
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &a));
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &b));
	OK(cubehip_buffer_write(a, 0, 0, in, sizeof in));
	/* Confirmed: a failed wait later cannot tell whether an unconfirmed write ran, and
	 * marks it failed (the input of the fixed kernel below would carry the failure). */
	OK(cubehip_device_sync(dev, 0));
	cubehip_kernel k, fixed;
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "blur", .block = {64, 1, 1}};
	OK(cubehip_kernel_create(dev, &d, &k));
	d.entry = "blur_fixed";
	OK(cubehip_kernel_create(dev, &d, &fixed));
	uint32_t g[3] = {1, 1, 1};
	cubehip_arg args[] = {cubehip_arg_buffer(a), cubehip_arg_buffer(b), cubehip_arg_i32(64)};
	OK(cubehip_launch(k, 0, g, args, 3));
	st = cubehip_device_sync(dev, 0);
	EXPECT(st == 700, "the sync reports the bad read as hipErrorIllegalAddress: %d %s", st, cubehip_last_error());
	EXPECT(strstr(cubehip_last_error(), "memcheck") != NULL, "message: %s", cubehip_last_error());

	cubehip_check_report r[4];
	for (int i = 0; i < 4; i++) r[i].size = sizeof r[i];
	size_t count = 0, total = 0;
	/* It reads the last error, and leaves it: OK() would insist on an empty one. */
	EXPECT(cubehip_last_check_reports(r, 4, &count, &total) == CUBEHIP_SUCCESS, "cubehip_last_check_reports");
	EXPECT(strstr(cubehip_last_error(), "memcheck") != NULL, "the last error stays: %s", cubehip_last_error());
	EXPECT(count == 1 && total == 1, "one report (in[-1] by thread 0): %zu of %zu", count, total);
	EXPECT(strcmp(r[0].check, "memcheck") == 0 && strcmp(r[0].what, "out of bounds") == 0, "%s: %s", r[0].check, r[0].what);
	EXPECT(strcmp(r[0].kernel, "blur") == 0 && strcmp(r[0].param, "in") == 0, "kernel %s param %s", r[0].kernel, r[0].param);
	EXPECT(r[0].offset == -4 && r[0].access_size == 4 && r[0].write == 0 && r[0].param_index == 0,
	       "offset %lld size %u write %d", (long long)r[0].offset, r[0].access_size, r[0].write);
	EXPECT(r[0].thread[0] == 0 && r[0].block[0] == 0 && r[0].line == 3, "thread %u line %d", r[0].thread[0], r[0].line);
	EXPECT(r[0].buffer_size == sizeof in, "buffer size %llu", (unsigned long long)r[0].buffer_size);

	/* A call that succeeds leaves no reports behind; bad arguments are refused. */
	OK(cubehip_device_sync(dev, 0));
	EXPECT(cubehip_last_check_reports(r, 4, &count, &total) == CUBEHIP_SUCCESS, "cubehip_last_check_reports");
	EXPECT(count == 0 && total == 0, "reports after a success: %zu", count);
	STATUS(cubehip_last_check_reports(r, 4, NULL, &total), CUBEHIP_ERROR_INVALID_ARGUMENT);
	r[0].size = 0;
	STATUS(cubehip_last_check_reports(r, 1, &count, &total), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* The fixed kernel, on a fresh output. */
	cubehip_buffer c;
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &c));
	cubehip_arg args2[] = {cubehip_arg_buffer(a), cubehip_arg_buffer(c), cubehip_arg_i32(64)};
	OK(cubehip_launch(fixed, 0, g, args2, 3));
	OK(cubehip_device_sync(dev, 0));
	float out[64];
	OK(cubehip_buffer_read(c, 0, 4, out + 1, sizeof out - 4));
	EXPECT(out[10] == 9.5f, "out[10] = %g", out[10]);

	OK(cubehip_device_close(dev));

	/* initcheck, racecheck and synccheck, each a kernel with one bug and its fixed twin. */
	o.check = "all";
	OK(cubehip_device_open(platform, 0, &o, &dev));
	static const char* more =
		"extern \"C\" __global__ void copy(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }\n"
		"extern \"C\" __global__ void reduce(const float* in, float* out, int fixed) {\n"
		"  __shared__ float s[64];\n"
		"  int t = threadIdx.x;\n"
		"  s[t] = in[t];\n"
		"  __syncthreads();\n"
		"  for (int k = 32; k > 0; k >>= 1) {\n"
		"    if (t < k) s[t] += s[t + k];\n"
		"    if (fixed) __syncthreads();\n"
		"  }\n"
		"  if (t == 0) out[0] = s[0];\n"
		"}\n"
		"extern \"C\" __global__ void tail(float* out, int fixed) {\n"
		"  if (fixed) __syncthreads();\n"
		"  if (threadIdx.x < 32) {\n"
		"    if (!fixed) __syncthreads();\n"
		"    out[threadIdx.x] = 1.0f;\n"
		"  }\n"
		"}\n";
	const char* entries[] = {"copy", "reduce", "tail"};
	cubehip_kernel ks[3];
	for (int i = 0; i < 3; i++) {
		cubehip_kernel_desc kd = {.size = sizeof kd, .source = more, .entry = entries[i], .block = {64, 1, 1}};
		OK(cubehip_kernel_create(dev, &kd, &ks[i]));
	}
	float ones[64];
	for (int i = 0; i < 64; i++) ones[i] = 1.0f;
	cubehip_buffer unwritten, written, sums, tails, copied;
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &unwritten));
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &copied));
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &written));
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &sums));
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &tails));
	OK(cubehip_buffer_write(written, 0, 0, ones, sizeof ones));
	OK(cubehip_buffer_write(sums, 0, 0, ones, sizeof ones));
	OK(cubehip_buffer_write(tails, 0, 0, ones, sizeof ones));
	OK(cubehip_buffer_write(copied, 0, 0, ones, sizeof ones));
	OK(cubehip_device_sync(dev, 0)); /* each bug below writes a buffer of its own */
	struct {
		cubehip_kernel k;
		cubehip_arg a[3];
		size_t n;
		const char* check;
		int line;
	} bugs[] = {
		{ks[0], {cubehip_arg_buffer(unwritten), cubehip_arg_buffer(copied)}, 2, "initcheck", 1},
		{ks[1], {cubehip_arg_buffer(written), cubehip_arg_buffer(sums), cubehip_arg_i32(0)}, 3, "racecheck", 8},
		{ks[2], {cubehip_arg_buffer(tails), cubehip_arg_i32(0)}, 2, "synccheck", 16},
	};
	for (int i = 0; i < 3; i++) {
		OK(cubehip_launch(bugs[i].k, 0, g, bugs[i].a, bugs[i].n));
		st = cubehip_device_sync(dev, 0);
		EXPECT(st != CUBEHIP_SUCCESS, "%s: the buggy kernel ran clean", bugs[i].check);
		r[0].size = sizeof r[0];
		EXPECT(cubehip_last_check_reports(r, 1, &count, &total) == CUBEHIP_SUCCESS && count == 1, "%s: no report", bugs[i].check);
		EXPECT(strcmp(r[0].check, bugs[i].check) == 0 && r[0].line == bugs[i].line, "%s: got %s at line %d: %s",
		       bugs[i].check, r[0].check, r[0].line, r[0].what);
	}
	/* The twins: the racecheck and synccheck kernels with their barriers in place, the
	 * copy from written memory. */
	cubehip_buffer fresh;
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &fresh));
	cubehip_arg twin0[] = {cubehip_arg_buffer(written), cubehip_arg_buffer(fresh)};
	OK(cubehip_launch(ks[0], 0, g, twin0, 2));
	OK(cubehip_device_sync(dev, 0));
	cubehip_buffer sum2, tail2;
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &sum2));
	OK(cubehip_buffer_alloc(dev, 0, sizeof ones, &tail2));
	cubehip_arg twin1[] = {cubehip_arg_buffer(written), cubehip_arg_buffer(sum2), cubehip_arg_i32(1)};
	OK(cubehip_launch(ks[1], 0, g, twin1, 3));
	cubehip_arg twin2[] = {cubehip_arg_buffer(tail2), cubehip_arg_i32(1)};
	OK(cubehip_launch(ks[2], 0, g, twin2, 2));
	OK(cubehip_device_sync(dev, 0));
	float sum = 0;
	OK(cubehip_buffer_read(sum2, 0, 0, &sum, sizeof sum));
	EXPECT(sum == 64.0f, "the fixed reduction sums to %g", sum);
	OK(cubehip_device_close(dev));

	/* A check the library does not know. */
	o.check = "leakcheck";
	STATUS(cubehip_device_open(platform, 0, &o, &dev), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "leakcheck") != NULL, "message: %s", cubehip_last_error());
	printf("check_test: checks passed\n");
	return 0;
}
