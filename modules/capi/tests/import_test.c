/* import_test.c: cubehip_buffer_import and cubehip_stream_native_handle, on the device
 * named by $CUBEHIP_PLATFORM (the cpu device by default). The imported memory is what
 * another library would hand over: another buffer's device memory (on every platform)
 * and, on the cpu device, a host allocation of the test's own. Built and run by
 * import_test.go against a freshly built libcubehip.so; exits non-zero on the first
 * failed check. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cubehip.h>

#include "check.h"

enum { N = 64 };

static const char* inc_src =
	"extern \"C\" __global__ void inc(unsigned* p, unsigned n) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) p[i] += 1;\n"
	"}\n";

/* The releases count their calls per user_data; they run on a thread of the library's. */
static atomic_int released[3];

static void count_release(void* user_data) { atomic_fetch_add(&released[(intptr_t)user_data], 1); }

/* A release on the caller's thread (CUBEHIP_IMPORT_RELEASE_ON_CALLER) records the thread
 * and calls back into the library (it holds no lock of the library's by then). */
static pthread_t on_caller_thread;
static atomic_int on_caller_calls;
static cubehip_device on_caller_dev;

static void on_caller_release(void* user_data) {
	(void)user_data;
	on_caller_thread = pthread_self();
	EXPECT(cubehip_device_sync(on_caller_dev, 0) == CUBEHIP_SUCCESS, "a release on the caller's thread could not call the library");
	atomic_fetch_add(&on_caller_calls, 1);
}

static void pause_ms(int ms) {
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* waits up to 5 s for released[i] to reach want, then checks it stays there. */
static void expect_released(int i, int want) {
	for (int t = 0; t < 5000 && atomic_load(&released[i]) < want; t++) pause_ms(1);
	pause_ms(5);
	EXPECT(atomic_load(&released[i]) == want, "release %d called %d times, want %d", i, atomic_load(&released[i]), want);
}


int main(void) {
	const char* platform = getenv("CUBEHIP_PLATFORM");
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	cubehip_device_props props = {.size = sizeof props};
	OK(cubehip_device_get_properties(dev, &props));
	cubehip_access rw = CUBEHIP_ACCESS_READ_WRITE;
	cubehip_kernel_desc kd = {.size = sizeof kd, .source = inc_src, .entry = "inc", .block = {64, 1, 1}, .access = &rw,
		.access_count = 1};
	cubehip_kernel inc;
	OK(cubehip_kernel_create(dev, &kd, &inc));
	const uint32_t grid[3] = {1, 1, 1};

	/* The "other library's" memory: a buffer of this device, known by its address only. */
	uint32_t data[N], out[N];
	for (int i = 0; i < N; i++) data[i] = (uint32_t)i;
	cubehip_buffer owner;
	OK(cubehip_buffer_alloc(dev, 0, sizeof data, &owner));
	OK(cubehip_buffer_write(owner, 0, 0, data, sizeof data));
	OK(cubehip_buffer_sync(owner));
	uint64_t ptr = 0;
	OK(cubehip_buffer_device_pointer(owner, &ptr));

	/* Shared both ways: a launch on the import is seen by the owner, and the owner's
	 * writes by the import. Releasing it calls the release once. */
	cubehip_buffer im;
	OK(cubehip_buffer_import(dev, 0, ptr, sizeof data, count_release, (void*)(intptr_t)0, &im));
	uint64_t size = 0;
	OK(cubehip_buffer_size(im, &size));
	EXPECT(size == sizeof data, "size %llu", (unsigned long long)size);
	cubehip_arg args[] = {buf_arg(im), u32_arg(N)};
	OK(cubehip_launch(inc, 0, grid, args, 2));
	OK(cubehip_buffer_sync(im));
	OK(cubehip_buffer_read(owner, 0, 0, out, sizeof out));
	EXPECT(out[0] == 1 && out[N - 1] == N, "the owner reads %u..%u after the import's launch", out[0], out[N - 1]);
	data[5] = 500;
	OK(cubehip_buffer_write(owner, 0, 0, data, sizeof data));
	OK(cubehip_buffer_sync(owner));
	OK(cubehip_buffer_read(im, 0, 0, out, sizeof out));
	EXPECT(out[5] == 500, "the import reads %u where the owner wrote 500", out[5]);
	EXPECT(atomic_load(&released[0]) == 0, "released while held");
	OK(cubehip_buffer_release(im));
	expect_released(0, 1);
	STATUS(cubehip_buffer_release(im), CUBEHIP_ERROR_INVALID_HANDLE);
	expect_released(0, 1);

	/* A graph that recorded work on the import keeps it until the graph is destroyed. */
	OK(cubehip_buffer_import(dev, 1, ptr, sizeof data, count_release, (void*)(intptr_t)1, &im));
	cubehip_arg gargs[] = {buf_arg(im), u32_arg(N)};
	cubehip_graph g;
	OK(cubehip_capture_begin(dev, 1));
	OK(cubehip_launch(inc, 1, grid, gargs, 2));
	OK(cubehip_capture_end(dev, 1, &g));
	OK(cubehip_buffer_release(im));
	OK(cubehip_graph_replay(g));
	OK(cubehip_device_sync(dev, 1));
	pause_ms(20);
	EXPECT(atomic_load(&released[1]) == 0, "released while a graph holds it");
	OK(cubehip_graph_destroy(g));
	expect_released(1, 1);
	OK(cubehip_buffer_read(owner, 0, 0, out, sizeof out));
	EXPECT(out[0] == 1, "the replay did not run once on the owner's memory: %u", out[0]);

	/* Bad input: errors, nothing written through NULL, *out zeroed, no release called. */
	cubehip_buffer bad = {.id = 99};
	STATUS(cubehip_buffer_import(dev, 0, ptr, sizeof data, count_release, (void*)(intptr_t)2, NULL),
		CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_import(dev, 0, 0, 16, count_release, (void*)(intptr_t)2, &bad), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(bad.id == 0, "a failed import left a handle");
	STATUS(cubehip_buffer_import(dev, 0, ptr, 0, count_release, (void*)(intptr_t)2, &bad), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_status st = cubehip_buffer_import(dev, 0, ptr, 1ULL << 40, count_release, (void*)(intptr_t)2, &bad);
	EXPECT(st == CUBEHIP_HIP_ERROR_INVALID_VALUE, "past its allocation: %s", cubehip_status_string(st));
	EXPECT(strstr(cubehip_last_error(), "past the end") != NULL, "message: %s", cubehip_last_error());
	st = cubehip_buffer_import(dev, 0, UINT64_MAX - 8, 64, count_release, (void*)(intptr_t)2, &bad);
	EXPECT(st == CUBEHIP_HIP_ERROR_INVALID_VALUE, "wrapping range: %s", cubehip_status_string(st));
	cubehip_device made_up = {.id = 0x5555};
	STATUS(cubehip_buffer_import(made_up, 0, ptr, 16, count_release, (void*)(intptr_t)2, &bad), CUBEHIP_ERROR_INVALID_HANDLE);
	uint64_t handle = 1;
	STATUS(cubehip_stream_native_handle(made_up, 0, &handle), CUBEHIP_ERROR_INVALID_HANDLE);
	EXPECT(handle == 0, "a failed call left %llu", (unsigned long long)handle);
	STATUS(cubehip_stream_native_handle(dev, 0, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	uint64_t h0 = 0, h0again = 0, h1 = 0;
	OK(cubehip_stream_native_handle(dev, 0, &h0));
	OK(cubehip_stream_native_handle(dev, 0, &h0again));
	OK(cubehip_stream_native_handle(dev, 1, &h1));
	EXPECT(h0 == h0again && h0 != h1, "stream handles %llu, %llu, %llu", (unsigned long long)h0,
		(unsigned long long)h0again, (unsigned long long)h1);
	EXPECT(atomic_load(&released[2]) == 0, "a failed import called its release");

	/* The cpu device takes host memory it never allocated; a NULL release is allowed. */
	void* host = NULL;
	if (strcmp(props.platform, "cpu") == 0) {
		host = calloc(N, sizeof(uint32_t));
		OK(cubehip_buffer_import(dev, 0, (uint64_t)(uintptr_t)host, N * sizeof(uint32_t), NULL, NULL, &im));
		cubehip_arg hargs[] = {buf_arg(im), u32_arg(N)};
		OK(cubehip_launch(inc, 0, grid, hargs, 2));
		OK(cubehip_buffer_sync(im));
		EXPECT(((uint32_t*)host)[N - 1] == 1, "the launch did not write the host memory");
		OK(cubehip_buffer_release(im));
	}

	/* CUBEHIP_IMPORT_RELEASE_ON_CALLER: the import of memory nothing uses any more is
	 * released by cubehip_buffer_release itself, on this thread; unknown flags are refused. */
	on_caller_dev = dev;
	cubehip_buffer bad_flags = {7};
	STATUS(cubehip_buffer_import_flags(dev, 0, ptr, 16, count_release, (void*)(intptr_t)2, 6, &bad_flags),
		CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(bad_flags.id == 0, "a refused import left a handle");
	EXPECT(strstr(cubehip_last_error(), "unknown flags") != NULL, "message: %s", cubehip_last_error());
	OK(cubehip_buffer_import_flags(dev, 0, ptr, sizeof data, on_caller_release, NULL, CUBEHIP_IMPORT_RELEASE_ON_CALLER, &im));
	cubehip_arg oargs[] = {buf_arg(im), u32_arg(N)};
	OK(cubehip_launch(inc, 0, grid, oargs, 2));
	OK(cubehip_buffer_sync(im));
	OK(cubehip_buffer_release(im));
	EXPECT(atomic_load(&on_caller_calls) == 1, "the release did not run before cubehip_buffer_release returned: %d",
		atomic_load(&on_caller_calls));
	EXPECT(pthread_equal(on_caller_thread, pthread_self()), "the release ran on another thread");
	OK(cubehip_buffer_import_flags(dev, 0, ptr, 16, count_release, (void*)(intptr_t)2, 0, &im));
	OK(cubehip_buffer_release(im));
	expect_released(2, 1);
	atomic_store(&released[2], 0);

	/* An import still held at close is released by the close, before it returns. */
	OK(cubehip_buffer_import(dev, 2, ptr, 16, count_release, (void*)(intptr_t)2, &im));
	OK(cubehip_kernel_destroy(inc));
	OK(cubehip_buffer_release(owner));
	OK(cubehip_device_close(dev));
	EXPECT(atomic_load(&released[2]) == 1, "close did not release the import: %d", atomic_load(&released[2]));
	STATUS(cubehip_buffer_release(im), CUBEHIP_ERROR_INVALID_HANDLE);
	free(host);
	printf("import (%s): %d checks passed\n", props.platform, checks);
	return 0;
}
