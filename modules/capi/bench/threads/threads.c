/* threads.c: a thread-per-request host. Each of THREADS threads has a stream id of its
 * own and serves ROUNDS requests: allocate an input and an output buffer of SIZE bytes,
 * write the input, launch a kernel, read the output back, check it and release both,
 * then wait PAUSE microseconds for the next request. A sampler thread reads the device's
 * memory usage every millisecond meanwhile. It prints the peak of reserved memory, the
 * bytes in use at that moment, the peak of bytes in use, and what is reserved once every
 * thread has released its buffers (right away, and after IDLE_MS milliseconds).
 *
 *   cc -O2 threads.c -I ../../include -L <dir of libcubehip.so> -lcubehip -lpthread -o threads
 *   ./threads [threads [rounds [size [pause_us [idle_ms]]]]]   (defaults 96 20 131072 2000 300)
 *
 * Each device stream has pools of its own, so what they reserve at once is what this
 * measures: the bytes in use are a few hundred KiB a thread at most.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cubehip.h>

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
	"extern \"C\" __global__ void scale(const float* x, float* y, float a, unsigned n) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = a * x[i];\n"
	"}\n";

enum { BLOCK = 256 };

static cubehip_device dev;
static cubehip_kernel kernel;
static int rounds = 20;
static uint64_t size = 128 << 10;
static int pause_us = 2000;
static atomic_int stop;

typedef struct {
	uint64_t reserved, in_use_then, in_use;
} peaks;

static void sleep_us(long us) {
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0) {
	}
}

static void usage_now(cubehip_memory_usage* u) {
	memset(u, 0, sizeof *u);
	u->size = sizeof *u;
	CHECK(cubehip_memory_usage_get(dev, u));
}

static void* sample(void* arg) {
	peaks* p = arg;
	while (!atomic_load(&stop)) {
		cubehip_memory_usage u;
		usage_now(&u);
		if (u.bytes_reserved > p->reserved) {
			p->reserved = u.bytes_reserved;
			p->in_use_then = u.bytes_in_use;
		}
		if (u.bytes_in_use > p->in_use) {
			p->in_use = u.bytes_in_use;
		}
		sleep_us(1000);
	}
	return NULL;
}

static void* serve(void* arg) {
	uint64_t stream = (uint64_t)(uintptr_t)arg;
	unsigned n = (unsigned)(size / sizeof(float));
	float* x = malloc(size);
	float* y = malloc(size);
	for (unsigned i = 0; i < n; i++) {
		x[i] = (float)(i + stream);
	}
	for (int r = 0; r < rounds; r++) {
		cubehip_buffer bx, by;
		CHECK(cubehip_buffer_alloc(dev, stream, size, &bx));
		CHECK(cubehip_buffer_alloc(dev, stream, size, &by));
		CHECK(cubehip_buffer_write(bx, stream, 0, x, size));
		cubehip_arg args[4] = {
			{.kind = CUBEHIP_ARG_BUFFER, .v.buffer = {bx, 0}},
			{.kind = CUBEHIP_ARG_BUFFER, .v.buffer = {by, 0}},
			{.kind = CUBEHIP_ARG_F32, .v.f32 = 2.0f},
			{.kind = CUBEHIP_ARG_U32, .v.u64 = n},
		};
		const uint32_t grid[3] = {(n + BLOCK - 1) / BLOCK, 1, 1};
		CHECK(cubehip_launch(kernel, stream, grid, args, 4));
		CHECK(cubehip_buffer_read(by, stream, 0, y, size));
		if (y[n - 1] != 2.0f * x[n - 1]) {
			fprintf(stderr, "stream %llu: y[%u] = %g, want %g\n", (unsigned long long)stream, n - 1,
				(double)y[n - 1], 2.0 * x[n - 1]);
			exit(1);
		}
		CHECK(cubehip_buffer_release(bx));
		CHECK(cubehip_buffer_release(by));
		if (pause_us > 0) {
			sleep_us(pause_us);
		}
	}
	free(x);
	free(y);
	return NULL;
}

int main(int argc, char** argv) {
	int threads = 96, idle_ms = 300;
	if (argc > 1) threads = atoi(argv[1]);
	if (argc > 2) rounds = atoi(argv[2]);
	if (argc > 3) size = strtoull(argv[3], NULL, 10);
	if (argc > 4) pause_us = atoi(argv[4]);
	if (argc > 5) idle_ms = atoi(argv[5]);
	if (threads < 1 || rounds < 1 || size < sizeof(float) || pause_us < 0 || idle_ms < 0) {
		fprintf(stderr, "usage: %s [threads [rounds [size [pause_us [idle_ms]]]]]\n", argv[0]);
		return 2;
	}

	CHECK(cubehip_device_open(NULL, 0, NULL, &dev));
	const cubehip_access access[] = {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_WRITE};
	cubehip_kernel_desc desc = {
		.size = sizeof desc,
		.source = source,
		.entry = "scale",
		.block = {BLOCK, 1, 1},
		.access = access,
		.access_count = 2,
	};
	CHECK(cubehip_kernel_create(dev, &desc, &kernel));
	CHECK(cubehip_kernel_compile(kernel));

	peaks p = {0};
	pthread_t sampler;
	pthread_create(&sampler, NULL, sample, &p);
	pthread_t* ts = calloc((size_t)threads, sizeof *ts);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < threads; i++) {
		pthread_create(&ts[i], NULL, serve, (void*)(uintptr_t)(i + 1));
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(ts[i], NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_store(&stop, 1);
	pthread_join(sampler, NULL);

	cubehip_memory_usage end, idle;
	usage_now(&end);
	sleep_us((long)idle_ms * 1000);
	usage_now(&idle);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	printf("threads %d, rounds %d, %llu bytes x2 a request, pause %d us: %.2f s\n", threads, rounds,
		(unsigned long long)size, pause_us, secs);
	printf("peak reserved %.1f MiB (in use then %.1f MiB); peak in use %.1f MiB\n", p.reserved / 1048576.0,
		p.in_use_then / 1048576.0, p.in_use / 1048576.0);
	printf("released: reserved %.1f MiB at once, %.1f MiB after %d ms\n", end.bytes_reserved / 1048576.0,
		idle.bytes_reserved / 1048576.0, idle_ms);
	free(ts);
	CHECK(cubehip_kernel_destroy(kernel));
	CHECK(cubehip_device_close(dev));
	return 0;
}
