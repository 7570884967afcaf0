/* cooperative_test.c: a cooperative launch through the C ABI, on the device named by
 * $CUBEHIP_PLATFORM (the cpu device by default): a reduction in one launch whose blocks
 * wait for each other at this_grid().sync(), over the grid the occupancy query sizes; one
 * block more refused; and, on the cpu device, the grid barrier in a launch that is not
 * cooperative failing that launch. Built and run by cooperative_test.go; exits non-zero
 * on the first failed check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"#include <hip/hip_runtime.h>\n"
	"#include <hip/hip_cooperative_groups.h>\n"
	"namespace cg = cooperative_groups;\n"
	"extern \"C\" __global__ void grid_sum(const int* in, int* partial, int* out, int n) {\n"
	"  cg::grid_group grid = cg::this_grid();\n"
	"  __shared__ int s[64];\n"
	"  int v = 0;\n"
	"  for (unsigned i = grid.thread_rank(); i < (unsigned)n; i += grid.size()) v += in[i];\n"
	"  s[threadIdx.x] = v;\n"
	"  __syncthreads();\n"
	"  for (unsigned k = 32; k > 0; k /= 2) {\n"
	"    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];\n"
	"    __syncthreads();\n"
	"  }\n"
	"  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];\n"
	"  grid.sync();\n"
	"  if (blockIdx.x == 0 && threadIdx.x == 0) {\n"
	"    int t = 0;\n"
	"    for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];\n"
	"    out[0] = t;\n"
	"  }\n"
	"}\n";

int main(void) {
	enum { N = 20011 };
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	cubehip_device_props props = {.size = sizeof props};
	OK(cubehip_device_get_properties(dev, &props));

	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "grid_sum", .block = {64, 1, 1},
		.flags = CUBEHIP_KERNEL_COOPERATIVE};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));
	int32_t per = -1;
	OK(cubehip_kernel_max_active_blocks(k, 64, 0, &per));
	EXPECT(per > 0, "%d blocks of 64 threads per multiprocessor", (int)per);
	const uint32_t blocks = (uint32_t)per * (uint32_t)props.multiprocessor_count;
	STATUS(cubehip_kernel_max_active_blocks(k, 64, 0, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_kernel_max_active_blocks(k, 0, 0, &per), CUBEHIP_ERROR_INVALID_ARGUMENT);

	static int32_t in[N];
	int32_t want = 0;
	for (int i = 0; i < N; i++) {
		in[i] = (int32_t)(i % 89) - 40;
		want += in[i];
	}
	cubehip_buffer bin, bpart, bout;
	OK(cubehip_buffer_alloc(dev, 0, sizeof in, &bin));
	OK(cubehip_buffer_alloc(dev, 0, 4 * (uint64_t)(blocks + 1), &bpart));
	OK(cubehip_buffer_alloc(dev, 0, 4, &bout));
	OK(cubehip_buffer_write(bin, 0, 0, in, sizeof in));
	const int32_t minus1 = -1;
	OK(cubehip_buffer_write(bout, 0, 0, &minus1, 4));
	cubehip_arg args[] = {buf_arg(bin), buf_arg(bpart), buf_arg(bout), cubehip_arg_i32(N)};
	const uint32_t g[3] = {blocks, 1, 1};
	cubehip_status st = cubehip_launch(k, 0, g, args, 4);
	if (st == CUBEHIP_HIP_ERROR_NOT_SUPPORTED) {
		printf("no cooperative launch on %s: %s; %d checks passed\n", props.platform, cubehip_last_error(), checks);
		return 0;
	}
	OK(st);
	int32_t got = 0;
	OK(cubehip_buffer_read(bout, 0, 0, &got, 4));
	EXPECT(got == want, "the sum over %u blocks is %d, want %d", blocks, (int)got, (int)want);

	/* One block more than the device holds at once: refused, naming the limit; nothing queued. */
	OK(cubehip_buffer_write(bout, 0, 0, &minus1, 4));
	const uint32_t g1[3] = {blocks + 1, 1, 1};
	STATUS(cubehip_launch(k, 0, g1, args, 4), CUBEHIP_HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	char limit[64];
	snprintf(limit, sizeof limit, "over the %u the device holds at once", blocks);
	EXPECT(strstr(cubehip_last_error(), limit) != NULL, "the message names the limit");
	OK(cubehip_buffer_read(bout, 0, 0, &got, 4));
	EXPECT(got == -1, "a refused launch wrote %d", (int)got);

	/* Unknown flags are refused. */
	cubehip_kernel_desc bad = d;
	bad.flags = 0x6;
	cubehip_kernel kb;
	STATUS(cubehip_kernel_create(dev, &bad, &kb), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* On the cpu device, the grid barrier in a launch that is not cooperative fails that
	 * launch, naming it: the buffers it writes carry the failure. */
	if (strcmp(props.platform, "cpu") == 0) {
		cubehip_kernel_desc plain = d;
		plain.flags = 0;
		cubehip_kernel kp;
		OK(cubehip_kernel_create(dev, &plain, &kp));
		const uint32_t g2[3] = {4, 1, 1};
		OK(cubehip_launch(kp, 0, g2, args, 4));
		STATUS(cubehip_buffer_read(bout, 0, 0, &got, 4), CUBEHIP_HIP_ERROR_LAUNCH_FAILURE);
		EXPECT(strstr(cubehip_last_error(), "this_grid().sync()") != NULL, "the message names the construct");
		(void)cubehip_device_sync(dev, 0);
		OK(cubehip_kernel_destroy(kp));
	}

	OK(cubehip_buffer_release(bin));
	OK(cubehip_buffer_release(bpart));
	OK(cubehip_buffer_release(bout));
	OK(cubehip_kernel_destroy(k));
	OK(cubehip_device_close(dev));
	printf("%d checks passed\n", checks);
	return 0;
}
