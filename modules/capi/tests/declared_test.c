/* declared_test.c: what a launch reads from the kernel's declaration, on the device named
 * by $CUBEHIP_PLATFORM (the cpu device by default): each buffer's access when desc.access
 * is NULL, a typed buffer's element type against the declared pointee, and the range of
 * each signed scalar kind. Built and run by declared_test.go; exits non-zero on the first
 * failed check. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* platform;

static const char* saxpy_src =
	"extern \"C\" __global__ void saxpy(int n, float a, const float* x, float* y) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = a * x[i] + y[i];\n"
	"}\n";

/* MESSAGE checks that the thread's last error holds s. */
#define MESSAGE(s) EXPECT(strstr(cubehip_last_error(), (s)) != NULL, "the message names %s", (s))

static cubehip_kernel create(cubehip_device dev, const char* src, const char* entry, const cubehip_access* acc,
	size_t n) {
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = entry, .access = acc, .access_count = n};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));
	return k;
}

/* desc.access NULL: each buffer's access is read from the declaration, as Go and Python
 * read it, and a launch computes. */
static void test_inferred_access(cubehip_device dev) {
	enum { N = 1000 };
	cubehip_kernel k = create(dev, saxpy_src, "saxpy", NULL, 0);
	float xs[N], ys[N];
	for (int i = 0; i < N; i++) xs[i] = (float)i, ys[i] = 10.0f;
	cubehip_buffer x, y;
	OK(cubehip_buffer_alloc(dev, 0, sizeof xs, &x));
	OK(cubehip_buffer_alloc(dev, 0, sizeof ys, &y));
	OK(cubehip_buffer_write(x, 0, 0, xs, sizeof xs));
	OK(cubehip_buffer_write(y, 0, 0, ys, sizeof ys));
	const uint32_t g[3] = {(N + 255) / 256, 1, 1};
	cubehip_arg a[] = {cubehip_arg_i32(N), cubehip_arg_f32(2.0f), cubehip_arg_buffer(x), cubehip_arg_buffer(y)};
	OK(cubehip_launch(k, 0, g, a, 4));
	OK(cubehip_buffer_read(y, 0, 0, ys, sizeof ys));
	for (int i = 0; i < N; i++) EXPECT(ys[i] == 2.0f * (float)i + 10.0f, "y[%d] = %g", i, (double)ys[i]);

	/* The inferred accesses are what a restated access is checked against: x is only read
	 * (const float*), y read and written. */
	cubehip_arg restated[4];
	memcpy(restated, a, sizeof a);
	restated[2].access = CUBEHIP_ACCESS_READ;
	restated[3].access = CUBEHIP_ACCESS_READ_WRITE;
	OK(cubehip_launch(k, 0, g, restated, 4));
	restated[2].access = CUBEHIP_ACCESS_READ_WRITE;
	STATUS(cubehip_launch(k, 0, g, restated, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	/* One buffer too many: the message says the access came from the declaration. */
	cubehip_arg three[] = {cubehip_arg_i32(N), cubehip_arg_f32(2.0f), cubehip_arg_buffer(x), cubehip_arg_buffer(y),
		cubehip_arg_buffer(y)};
	STATUS(cubehip_launch(k, 0, g, three, 5), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("desc.access is NULL");
	MESSAGE("2 pointer parameters");
	OK(cubehip_kernel_destroy(k));

	/* A kernel whose parameters a macro declares: its pointers cannot be read, and a
	 * launch with a buffer says so and how to fix it, rather than counting an access
	 * nobody gave. */
	const char* macro_src =
		"#define PARAMS float* p\n"
		"extern \"C\" __global__ void through_macro(PARAMS) { p[threadIdx.x] = 7.0f; }\n";
	k = create(dev, macro_src, "through_macro", NULL, 0);
	cubehip_arg one[] = {cubehip_arg_buffer(y)};
	const uint32_t g1[3] = {1, 1, 1};
	STATUS(cubehip_launch(k, 0, g1, one, 1), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("no pointer parameter was read from the declaration of through_macro");
	MESSAGE("give desc.access");
	OK(cubehip_kernel_destroy(k));
	const cubehip_access w[] = {CUBEHIP_ACCESS_WRITE};
	k = create(dev, macro_src, "through_macro", w, 1);
	OK(cubehip_launch(k, 0, g1, one, 1));
	OK(cubehip_buffer_read(y, 0, 0, ys, sizeof ys));
	EXPECT(ys[0] == 7.0f, "the macro kernel with desc.access ran: %g", (double)ys[0]);
	OK(cubehip_kernel_destroy(k));

	/* An entry the source does not define: nothing to read an access from, and the
	 * compile's error (which names the entry) is what the launch returns. */
	k = create(dev, saxpy_src, "Saxpy", NULL, 0);
	STATUS(cubehip_launch(k, 0, g, a, 4), CUBEHIP_ERROR_COMPILE);
	MESSAGE("(it defines: saxpy)");
	STATUS(cubehip_device_sync(dev, 0), CUBEHIP_ERROR_COMPILE); /* the stream's sync reports the failed launch, once */
	OK(cubehip_device_sync(dev, 0));
	OK(cubehip_kernel_destroy(k));

	OK(cubehip_buffer_release(x));
	OK(cubehip_buffer_release(y));
}

/* A typed buffer is checked against the declared pointee; an untyped one goes anywhere. */
static void test_typed_buffers(cubehip_device dev) {
	enum { N = 256 };
	cubehip_kernel k = create(dev, saxpy_src, "saxpy", NULL, 0);
	cubehip_buffer x32, x64, y, raw;
	OK(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_F32, N, &x32));
	OK(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_F64, N, &x64));
	OK(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_F32, N, &y));
	OK(cubehip_buffer_alloc(dev, 0, N * sizeof(float), &raw));
	uint64_t size = 0;
	OK(cubehip_buffer_size(x64, &size));
	EXPECT(size == N * sizeof(double), "an F64 buffer of %d elements has %llu bytes", N, (unsigned long long)size);
	int32_t dt = -1;
	OK(cubehip_buffer_dtype(x64, &dt));
	EXPECT(dt == CUBEHIP_DTYPE_F64, "dtype %d", (int)dt);
	OK(cubehip_buffer_dtype(raw, &dt));
	EXPECT(dt == CUBEHIP_DTYPE_NONE, "an untyped buffer's dtype %d", (int)dt);
	STATUS(cubehip_buffer_dtype(raw, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);

	float xs[N], ys[N];
	for (int i = 0; i < N; i++) xs[i] = (float)i, ys[i] = 1.0f;
	OK(cubehip_buffer_write(x32, 0, 0, xs, sizeof xs));
	OK(cubehip_buffer_write(raw, 0, 0, xs, sizeof xs));
	OK(cubehip_buffer_write(y, 0, 0, ys, sizeof ys));
	const uint32_t g[3] = {1, 1, 1};
	cubehip_arg a[] = {cubehip_arg_i32(N), cubehip_arg_f32(3.0f), cubehip_arg_buffer(x32), cubehip_arg_buffer(y)};
	OK(cubehip_launch(k, 0, g, a, 4));
	a[2] = cubehip_arg_buffer(raw); /* untyped: taken by any pointer */
	OK(cubehip_launch(k, 0, g, a, 4));
	OK(cubehip_buffer_read(y, 0, 0, ys, sizeof ys));
	for (int i = 0; i < N; i++) EXPECT(ys[i] == 6.0f * (float)i + 1.0f, "y[%d] = %g", i, (double)ys[i]);

	/* A double buffer for const float* x: refused at the call, naming the parameter, the
	 * declared type and the given one, and y is left as it was. */
	a[2] = cubehip_arg_buffer(x64);
	STATUS(cubehip_launch(k, 0, g, a, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("argument 2 (x)");
	MESSAGE("const float* x");
	MESSAGE("double");
	EXPECT(strstr(cubehip_last_error(), "Arg()") == NULL, "a Go remedy at the C ABI");
	/* The same through an offset into it, and with the grid read on the device. */
	a[2].v.buffer.offset = 8;
	STATUS(cubehip_launch(k, 0, g, a, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("argument 2 (x)");
	cubehip_buffer count;
	OK(cubehip_buffer_alloc(dev, 0, 12, &count));
	const uint32_t c3[3] = {1, 1, 1};
	OK(cubehip_buffer_write(count, 0, 0, c3, sizeof c3));
	STATUS(cubehip_launch_dynamic(k, 0, count, a, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("const float* x");
	/* A typed output too: an I32 buffer for float* y. */
	cubehip_buffer yi;
	OK(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_I32, N, &yi));
	a[2] = cubehip_arg_buffer(x32);
	a[3] = cubehip_arg_buffer(yi);
	STATUS(cubehip_launch(k, 0, g, a, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("argument 3 (y)");
	OK(cubehip_buffer_read(y, 0, 0, ys, sizeof ys));
	EXPECT(ys[5] == 31.0f, "y untouched by the refused launches: %g", (double)ys[5]);

	/* Signedness may differ (unsigned* takes an I32 buffer), byte pointers take any
	 * buffer, and a pointer whose type the declaration does not spell takes any too. */
	const char* loose_src =
		"typedef float real;\n"
		"extern \"C\" __global__ void loose(unsigned* u, const unsigned char* bytes, const real* r) {\n"
		"  u[threadIdx.x] = bytes[threadIdx.x] + (unsigned)r[0];\n"
		"}\n";
	cubehip_kernel lk = create(dev, loose_src, "loose", NULL, 0);
	cubehip_arg la[] = {cubehip_arg_buffer(yi), cubehip_arg_buffer(x64), cubehip_arg_buffer(x64)};
	OK(cubehip_launch(lk, 0, g, la, 3));
	OK(cubehip_device_sync(dev, 0));
	OK(cubehip_buffer_check(yi));
	cubehip_buffer u64;
	OK(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_U64, N, &u64));
	la[0] = cubehip_arg_buffer(u64); /* a 64-bit buffer for unsigned*: the width differs */
	STATUS(cubehip_launch(lk, 0, g, la, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("argument 0 (u)");
	OK(cubehip_kernel_destroy(lk));

	/* Bad requests name what was wrong and make nothing. */
	cubehip_buffer none = {0};
	STATUS(cubehip_buffer_alloc_typed(dev, 0, 42, N, &none), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("dtype 42");
	EXPECT(none.id == 0, "a refused allocation wrote a handle");
	STATUS(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_NONE, N, &none), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_F64, UINT64_MAX / 4, &none), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("beyond any address space");
	STATUS(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_F32, N, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_device gone = {0};
	STATUS(cubehip_buffer_alloc_typed(gone, 0, CUBEHIP_DTYPE_F32, N, &none), CUBEHIP_ERROR_INVALID_HANDLE);

	/* A recycled buffer keeps its type. */
	int32_t kept = -1;
	cubehip_buffer fresh;
	OK(cubehip_buffer_alloc_typed(dev, 0, CUBEHIP_DTYPE_U16, 8, &fresh));
	OK(cubehip_buffer_recycle(fresh, &kept));
	if (kept) {
		OK(cubehip_buffer_dtype(fresh, &dt));
		EXPECT(dt == CUBEHIP_DTYPE_U16, "a kept buffer's dtype %d", (int)dt);
		OK(cubehip_buffer_release(fresh));
	}

	OK(cubehip_buffer_release(count));
	OK(cubehip_buffer_release(u64));
	OK(cubehip_buffer_release(yi));
	OK(cubehip_buffer_release(x32));
	OK(cubehip_buffer_release(x64));
	OK(cubehip_buffer_release(y));
	OK(cubehip_buffer_release(raw));
	OK(cubehip_kernel_destroy(k));
}

/* Each signed kind takes exactly its type's range: the bounds reach the kernel as they
 * are, and one past either bound is refused rather than wrapped (an I8 of -200 would
 * reach the kernel as 56). */
static void test_signed_ranges(cubehip_device dev) {
	const char* src =
		"extern \"C\" __global__ void ranges(long long* out, signed char a, short b, int c) {\n"
		"  out[0] = a; out[1] = b; out[2] = c;\n"
		"}\n";
	cubehip_kernel k = create(dev, src, "ranges", NULL, 0);
	cubehip_buffer out;
	OK(cubehip_buffer_alloc(dev, 0, 3 * sizeof(int64_t), &out));
	const uint32_t g[3] = {1, 1, 1};
	const int64_t lo[3] = {INT8_MIN, INT16_MIN, INT32_MIN}, hi[3] = {INT8_MAX, INT16_MAX, INT32_MAX};
	const int32_t kinds[3] = {CUBEHIP_ARG_I8, CUBEHIP_ARG_I16, CUBEHIP_ARG_I32};
	cubehip_arg a[4] = {cubehip_arg_buffer(out)};
	for (int bound = 0; bound < 2; bound++) {
		const int64_t* v = bound ? hi : lo;
		for (int j = 0; j < 3; j++) {
			a[1 + j].kind = kinds[j];
			a[1 + j].v.i64 = v[j];
		}
		OK(cubehip_launch(k, 0, g, a, 4));
		int64_t got[3];
		OK(cubehip_buffer_read(out, 0, 0, got, sizeof got));
		for (int j = 0; j < 3; j++) EXPECT(got[j] == v[j], "kind %d: %lld reached the kernel as %lld", kinds[j], (long long)v[j], (long long)got[j]);
	}
	for (int j = 0; j < 3; j++) {
		for (int bound = 0; bound < 2; bound++) {
			cubehip_arg bad[4];
			memcpy(bad, a, sizeof a);
			bad[1 + j].v.i64 = bound ? hi[j] + 1 : lo[j] - 1;
			cubehip_status s = cubehip_launch(k, 0, g, bad, 4);
			EXPECT(s == CUBEHIP_ERROR_INVALID_ARGUMENT, "kind %d: %lld, one past its range, returned %s", kinds[j],
				(long long)bad[1 + j].v.i64, cubehip_status_string(s));
			MESSAGE("does not fit");
		}
	}
	/* The I8 of the report: -200 is refused, not passed as 56. */
	a[1].kind = CUBEHIP_ARG_I8, a[1].v.i64 = -200;
	STATUS(cubehip_launch(k, 0, g, a, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	MESSAGE("-200 does not fit");
	OK(cubehip_buffer_release(out));
	OK(cubehip_kernel_destroy(k));
}

int main(void) {
	platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	test_inferred_access(dev);
	test_typed_buffers(dev);
	test_signed_ranges(dev);
	OK(cubehip_device_close(dev));
	printf("declared_test: %d checks passed on %s\n", checks, platform);
	return 0;
}
