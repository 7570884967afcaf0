/* saxpy.c: y = a*x + y on the default device (the cpu device when there is no GPU),
 * through libcubehip's C ABI, checking every call.
 *
 *   cc saxpy.c $(pkg-config --cflags --libs cubehip) -o saxpy && ./saxpy
 */
#include <stdio.h>
#include <stdlib.h>

#include <cubehip.h>

/* CHECK prints the failing call, its status's name and the thread's message, and exits. */
#define CHECK(call)                                                                                    \
	do {                                                                                               \
		cubehip_status s_ = (call);                                                                    \
		if (s_ != CUBEHIP_SUCCESS) {                                                                   \
			fprintf(stderr, "%s:%d: %s: %s (%d): %s\n", __FILE__, __LINE__, #call,                     \
				cubehip_status_string(s_), (int)s_, cubehip_last_error());                             \
			exit(1);                                                                                   \
		}                                                                                              \
	} while (0)

static const char* source =
	"#include <hip/hip_runtime.h>\n"
	"extern \"C\" __global__ void saxpy(unsigned n, float a, const float* x, float* y) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = a * x[i] + y[i];\n"
	"}\n";

int main(void) {
	enum { N = 1 << 20, BLOCK = 256 };
	cubehip_device dev;
	CHECK(cubehip_device_open(NULL, 0, NULL, &dev));

	cubehip_device_props props = {.size = sizeof props};
	CHECK(cubehip_device_get_properties(dev, &props));
	printf("device: %s (%s, %s)\n", props.name, props.platform, props.arch);

	float* x = malloc(N * sizeof *x);
	float* y = malloc(N * sizeof *y);
	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
	}

	cubehip_buffer bx, by;
	CHECK(cubehip_buffer_alloc(dev, 0, N * sizeof(float), &bx));
	CHECK(cubehip_buffer_alloc(dev, 0, N * sizeof(float), &by));
	CHECK(cubehip_buffer_write(bx, 0, 0, x, N * sizeof(float)));
	CHECK(cubehip_buffer_write(by, 0, 0, y, N * sizeof(float)));

	const cubehip_access access[] = {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_READ_WRITE};
	cubehip_kernel_desc desc = {
		.size = sizeof desc,
		.source = source,
		.entry = "saxpy",
		.block = {BLOCK, 1, 1},
		.access = access,
		.access_count = 2,
	};
	cubehip_kernel k;
	CHECK(cubehip_kernel_create(dev, &desc, &k));
	cubehip_status s = cubehip_kernel_compile(k);
	if (s == CUBEHIP_ERROR_COMPILE) {
		char log[4096];
		cubehip_kernel_log(k, log, sizeof log, NULL);
		fprintf(stderr, "compile error:\n%s\n", log);
		return 1;
	}
	CHECK(s);

	/* In the kernel's order: scalars first, as most HIP code declares them. */
	cubehip_arg args[4] = {
		{.kind = CUBEHIP_ARG_U32, .v.u64 = N},
		{.kind = CUBEHIP_ARG_F32, .v.f32 = 2.0f},
		{.kind = CUBEHIP_ARG_BUFFER, .v.buffer = {bx, 0}},
		{.kind = CUBEHIP_ARG_BUFFER, .v.buffer = {by, 0}},
	};
	const uint32_t grid[3] = {(N + BLOCK - 1) / BLOCK, 1, 1};
	CHECK(cubehip_launch(k, 0, grid, args, 4));
	CHECK(cubehip_buffer_read(by, 0, 0, y, N * sizeof(float)));

	int bad = 0;
	for (int i = 0; i < N; i++)
		if (y[i] != 2.0f * (float)i + 1.0f) bad++;
	printf("saxpy over %d elements: %s\n", N, bad ? "WRONG" : "ok");

	CHECK(cubehip_kernel_destroy(k));
	CHECK(cubehip_buffer_release(bx));
	CHECK(cubehip_buffer_release(by));
	CHECK(cubehip_device_close(dev));
	free(x);
	free(y);
	return bad != 0;
}
