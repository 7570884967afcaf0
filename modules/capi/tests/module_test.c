/* module_test.c: modules through the C ABI, on the device named by $CUBEHIP_PLATFORM (the
 * cpu device by default): two kernels of one module share a __device__ variable, the
 * module's variables read and written through the module, a template kernel and a
 * C++-linkage kernel taken by name expression, a kernel's compile error at its first
 * launch and at the stream's next sync, a missing entry named with the defined ones,
 * and the errors. Built and run by module_test.go; exits non-zero on the first failed
 * check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"#include <hip/hip_runtime.h>\n"
	"__device__ unsigned counter;\n"
	"extern \"C\" __global__ void put(unsigned v) { if (threadIdx.x == 0) counter = v; }\n"
	"extern \"C\" __global__ void get(unsigned* out) { if (threadIdx.x == 0) out[0] = counter; }\n"
	"template <typename T> __global__ void fill(T* out, T v, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) out[i] = v;\n"
	"}\n"
	"__global__ void add_one(int* y, int n) { int i = threadIdx.x; if (i < n) y[i] += 1; }\n";

int main(void) {
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));

	const char* names[] = {"fill<int>", "add_one"};
	cubehip_module_desc md = {.size = sizeof md, .source = src, .name_expressions = names, .name_count = 2};
	cubehip_module m;
	OK(cubehip_module_create(dev, &md, &m));
	OK(cubehip_module_compile(m));

	cubehip_kernel put, get, fill, add;
	cubehip_kernel_desc d = {.size = sizeof d, .entry = "put", .block = {32, 1, 1}};
	OK(cubehip_module_kernel(m, &d, &put));
	d.entry = "get";
	OK(cubehip_module_kernel(m, &d, &get));
	d.entry = "fill<int>";
	OK(cubehip_module_kernel(m, &d, &fill));
	d.entry = "add_one";
	OK(cubehip_module_kernel(m, &d, &add));

	/* put writes the module's variable; get, another kernel of the module, reads it. */
	cubehip_buffer out;
	OK(cubehip_buffer_alloc(dev, 0, 4 * sizeof(int32_t), &out));
	const uint32_t one[3] = {1, 1, 1};
	cubehip_arg pa[] = {{.kind = CUBEHIP_ARG_U32, .v.u64 = 41}};
	OK(cubehip_launch(put, 0, one, pa, 1));
	cubehip_arg ga[] = {buf_arg(out)};
	OK(cubehip_launch(get, 0, one, ga, 1));
	uint32_t got = 0;
	OK(cubehip_buffer_read(out, 0, 0, &got, sizeof got));
	EXPECT(got == 41, "get read %u, want 41", got);
	uint32_t v = 0;
	OK(cubehip_module_global_read(m, 0, "counter", &v, sizeof v));
	EXPECT(v == 41, "the module's counter is %u", v);
	v = 7;
	OK(cubehip_module_global_write(m, 0, "counter", &v, sizeof v));
	OK(cubehip_launch(get, 0, one, ga, 1));
	OK(cubehip_buffer_read(out, 0, 0, &got, sizeof got));
	EXPECT(got == 7, "get read %u after the module's write, want 7", got);
	uint64_t size = 0;
	OK(cubehip_module_global_size(m, "counter", &size));
	EXPECT(size == 4, "counter is %llu bytes", (unsigned long long)size);
	STATUS(cubehip_module_global_size(m, "nope", &size), 500 /* hipErrorNotFound */);
	/* The variable as a buffer: what a kernel wrote reads through it, and a write through it
	 * is what the next kernel reads. */
	cubehip_buffer var;
	OK(cubehip_module_global_buffer(m, 0, "counter", &var));
	OK(cubehip_buffer_read(var, 0, 0, &v, sizeof v));
	EXPECT(v == 7, "the variable read through its buffer is %u", v);
	v = 12;
	OK(cubehip_buffer_write(var, 0, 0, &v, sizeof v));
	OK(cubehip_launch(get, 0, one, ga, 1));
	OK(cubehip_buffer_read(out, 0, 0, &got, sizeof got));
	EXPECT(got == 12, "get read %u after a write through the variable's buffer, want 12", got);
	OK(cubehip_buffer_release(var));
	STATUS(cubehip_module_global_buffer(m, 0, "nope", &var), 500);

	/* C++ kernels by name expression: a template's specialization, a C++-linkage kernel. */
	cubehip_arg fa[] = {buf_arg(out), {.kind = CUBEHIP_ARG_I32, .v.i64 = 5}, {.kind = CUBEHIP_ARG_I32, .v.i64 = 4}};
	OK(cubehip_launch(fill, 0, one, fa, 3));
	cubehip_arg aa[] = {buf_arg(out), {.kind = CUBEHIP_ARG_I32, .v.i64 = 4}};
	OK(cubehip_launch(add, 0, one, aa, 2));
	int32_t ints[4];
	OK(cubehip_buffer_read(out, 0, 0, ints, sizeof ints));
	for (int i = 0; i < 4; i++) EXPECT(ints[i] == 6, "ints[%d] = %d, want 6", i, ints[i]);

	/* A kernel without a declaration in the module: its first launch names the ones it has. */
	cubehip_kernel missing;
	d.entry = "Get";
	OK(cubehip_module_kernel(m, &d, &missing));
	STATUS(cubehip_launch(missing, 0, one, ga, 1), CUBEHIP_ERROR_COMPILE);
	EXPECT(strstr(cubehip_last_error(), "(it defines: put, get, fill, add_one)") != NULL, "%s", cubehip_last_error());
	STATUS(cubehip_device_sync(dev, 0), CUBEHIP_ERROR_COMPILE); /* the stream's sync reports it too, once */
	OK(cubehip_device_sync(dev, 0));

	/* A module's desc and a module kernel's desc are checked. */
	d.source = src;
	STATUS(cubehip_module_kernel(m, &d, &missing), CUBEHIP_ERROR_INVALID_ARGUMENT);
	d.source = NULL;
	cubehip_module_desc bad = md;
	cubehip_module none;
	bad.source = NULL;
	STATUS(cubehip_module_create(dev, &bad, &none), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(none.id == 0, "a refused create leaves the zero handle");
	bad = md;
	bad.name_expressions = NULL;
	STATUS(cubehip_module_create(dev, &bad, &none), CUBEHIP_ERROR_INVALID_ARGUMENT);
	bad = md;
	bad.size = 8;
	STATUS(cubehip_module_create(dev, &bad, &none), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* A module that does not compile: the compile's status, and its log. */
	cubehip_module_desc broken = {.size = sizeof broken, .source = "extern \"C\" __global__ void k() { nope; }"};
	cubehip_module bm;
	OK(cubehip_module_create(dev, &broken, &bm));
	STATUS(cubehip_module_compile(bm), CUBEHIP_ERROR_COMPILE);
	char log[4096];
	size_t n = 0;
	OK(cubehip_module_log(bm, log, sizeof log, &n));
	EXPECT(n > 0 && strstr(log, "nope") != NULL, "the log names the mistake: %s", log);
	OK(cubehip_module_destroy(bm));
	STATUS(cubehip_module_compile(bm), CUBEHIP_ERROR_INVALID_HANDLE);

	OK(cubehip_buffer_release(out));
	OK(cubehip_module_destroy(m));
	OK(cubehip_kernel_destroy(get)); /* a module's kernels outlive its handle */
	OK(cubehip_device_close(dev));
	printf("module_test: %d checks passed on %s\n", checks, platform);
	return 0;
}
