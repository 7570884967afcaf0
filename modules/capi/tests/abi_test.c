/* abi_test.c: every function of include/cubehip.h and its error paths, on the device
 * named by $CUBEHIP_PLATFORM (the cpu device by default). Built and run by capi_test.go
 * against a freshly built libcubehip.so; exits non-zero on the first failed check. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

static const char* platform;
#include "check.h"

static const char* fill_src =
	"extern \"C\" __global__ void fill(unsigned* out, unsigned v, unsigned n) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) out[i] = v + i;\n"
	"}\n";
static const char* add_src =
	"extern \"C\" __global__ void add(const unsigned* in, unsigned* out, unsigned n) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) out[i] = in[i] + 1;\n"
	"}\n";

static cubehip_kernel make_kernel(cubehip_device dev, const char* src, const char* entry, const cubehip_access* acc,
	size_t nacc) {
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = entry, .block = {64, 1, 1}, .access = acc,
		.access_count = nacc};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));
	return k;
}


static void test_statuses(void) {
	EXPECT(cubehip_version() == CUBEHIP_VERSION_MAJOR * 10000 + CUBEHIP_VERSION_MINOR * 100 + CUBEHIP_VERSION_PATCH,
		"version %u", cubehip_version());
	EXPECT(strcmp(cubehip_status_string(CUBEHIP_SUCCESS), "CUBEHIP_SUCCESS") == 0, "success name");
	EXPECT(strcmp(cubehip_status_string(CUBEHIP_HIP_ERROR_OUT_OF_MEMORY), "hipErrorOutOfMemory") == 0, "%s",
		cubehip_status_string(2));
	EXPECT(strcmp(cubehip_status_string(CUBEHIP_ERROR_INVALID_HANDLE), "CUBEHIP_ERROR_INVALID_HANDLE") == 0, "own name");
	EXPECT(strcmp(cubehip_status_string(123456), "unknown status") == 0, "unknown");
	EXPECT(cubehip_status_string(-1) != NULL, "never NULL");
	/* The pointer is for good: the same one twice. */
	EXPECT(cubehip_status_string(1) == cubehip_status_string(1), "stable pointer");
}

static void test_devices(void) {
	int32_t n = -1;
	OK(cubehip_device_count(platform, &n));
	EXPECT(n >= 1, "device count %d", n);
	STATUS(cubehip_device_count(platform, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "NULL") != NULL, "message names the NULL: %s", cubehip_last_error());

	cubehip_device_props p = {.size = sizeof p};
	OK(cubehip_device_properties(platform, 0, &p));
	EXPECT(p.name[0] != 0 && p.max_threads_per_block > 0 && p.warp_size > 0, "props of %s", p.name);
	STATUS(cubehip_device_properties(platform, n, &p), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_device_properties(platform, -1, &p), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(p.shared_mem_per_block_optin >= p.shared_mem_per_block, "opt-in limit %llu under the default %llu",
		(unsigned long long)p.shared_mem_per_block_optin, (unsigned long long)p.shared_mem_per_block);
	cubehip_device_props small = {.size = 8};
	STATUS(cubehip_device_properties(platform, 0, &small), CUBEHIP_ERROR_INVALID_ARGUMENT);
	/* A host built with the 0.1 header passes the struct as it ended then, at integrated:
	 * it gets those fields and nothing is written past them. */
	{
		const size_t old = offsetof(cubehip_device_props, integrated) + sizeof p.integrated;
		unsigned char mem[sizeof(cubehip_device_props) + 16];
		memset(mem, 0xab, sizeof mem);
		cubehip_device_props* v01 = (cubehip_device_props*)(void*)mem;
		v01->size = old;
		OK(cubehip_device_properties(platform, 0, v01));
		EXPECT(strcmp(v01->name, p.name) == 0 && v01->integrated == p.integrated, "the old fields");
		size_t written = old;
		while (written < sizeof mem && mem[written] == 0xab) written++;
		EXPECT(written == sizeof mem, "byte %zu past an old struct of %zu bytes written", written, old);
	}
	STATUS(cubehip_device_properties(platform, 0, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(cubehip_device_properties("no-such-platform", 0, &p) != CUBEHIP_SUCCESS, "unknown platform");
	EXPECT(strstr(cubehip_last_error(), "no-such-platform") != NULL, "%s", cubehip_last_error());

	cubehip_device dev;
	STATUS(cubehip_device_open(platform, 0, NULL, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_device_options bad = {.size = 4};
	STATUS(cubehip_device_open(platform, 0, &bad, &dev), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(dev.id == 0, "no handle on failure");
	cubehip_device_options o = {.size = sizeof o, .max_streams = 4, .cache_dir = NULL};
	OK(cubehip_device_open(platform, 0, &o, &dev));
	cubehip_device_props q = {.size = sizeof q};
	OK(cubehip_device_get_properties(dev, &q));
	EXPECT(strcmp(q.name, p.name) == 0, "open device's props");
	OK(cubehip_device_sync(dev, 0));
	OK(cubehip_device_sync(dev, 7));
	OK(cubehip_device_close(dev));
	STATUS(cubehip_device_close(dev), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_device_sync(dev, 0), CUBEHIP_ERROR_INVALID_HANDLE);
	cubehip_device zero = {0}, madeup = {0x0100000100000005ull};
	STATUS(cubehip_device_sync(zero, 0), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_device_sync(madeup, 0), CUBEHIP_ERROR_INVALID_HANDLE);
}

static void test_buffers(cubehip_device dev) {
	enum { N = 4096 };
	cubehip_buffer b;
	OK(cubehip_buffer_alloc(dev, 0, N * 4, &b));
	uint64_t size = 0;
	OK(cubehip_buffer_size(b, &size));
	EXPECT(size == N * 4, "size %llu", (unsigned long long)size);
	STATUS(cubehip_buffer_size(b, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_alloc(dev, 0, 16, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	/* Larger than any device's memory: out of memory, as a driver says, and nothing made. */
	cubehip_buffer huge = {0};
	STATUS(cubehip_buffer_alloc(dev, 0, UINT64_C(1) << 62, &huge), CUBEHIP_HIP_ERROR_OUT_OF_MEMORY);
	EXPECT(huge.id == 0, "a failed allocation wrote handle %llx", (unsigned long long)huge.id);

	uint32_t in[N], out[N];
	for (int i = 0; i < N; i++) in[i] = 3u * i + 7u;
	OK(cubehip_buffer_write(b, 0, 0, in, sizeof in));
	memset(out, 0, sizeof out);
	OK(cubehip_buffer_read(b, 0, 0, out, sizeof out));
	EXPECT(memcmp(in, out, sizeof in) == 0, "round trip");
	/* Another stream sees the write: ordered after the buffer's last write. */
	memset(out, 0, sizeof out);
	OK(cubehip_buffer_read(b, 5, 0, out, sizeof out));
	EXPECT(memcmp(in, out, sizeof in) == 0, "round trip on another stream");
	OK(cubehip_buffer_check(b));
	OK(cubehip_buffer_sync(b));

	STATUS(cubehip_buffer_write(b, 0, 0, NULL, 16), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_read(b, 0, 0, NULL, 16), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_read(b, 0, 0, out, sizeof out + 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_read(b, 0, UINT64_MAX, out, 4), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_buffer_write(b, 0, 8, in, UINT64_MAX - 4), CUBEHIP_ERROR_INVALID_ARGUMENT);

	OK(cubehip_buffer_release(b));
	STATUS(cubehip_buffer_release(b), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_read(b, 0, 0, out, 4), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_write(b, 0, 0, in, 4), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_check(b), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_size(b, &size), CUBEHIP_ERROR_INVALID_HANDLE);
	/* A released handle stays invalid when its slot holds a new buffer: the generation
	 * in the id tells them apart. */
	cubehip_buffer again;
	OK(cubehip_buffer_alloc(dev, 0, 8, &again));
	EXPECT((again.id & 0xffffffffu) == (b.id & 0xffffffffu), "the freed slot is reused");
	STATUS(cubehip_buffer_size(b, &size), CUBEHIP_ERROR_INVALID_HANDLE);
	OK(cubehip_buffer_size(again, &size));
	EXPECT(size == 8, "the new buffer's size %llu", (unsigned long long)size);
	OK(cubehip_buffer_release(again));

	/* Recycle keeps an idle buffer (usable as a fresh one) and releases any other. */
	cubehip_buffer r;
	int32_t kept = -1;
	OK(cubehip_buffer_alloc(dev, 0, 16, &r));
	STATUS(cubehip_buffer_recycle(r, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	OK(cubehip_buffer_size(r, &size));
	OK(cubehip_buffer_recycle(r, &kept));
	EXPECT(kept == 1, "a fresh buffer is idle: kept %d", (int)kept);
	OK(cubehip_buffer_write(r, 0, 0, in, 16));
	kept = -1;
	OK(cubehip_buffer_recycle(r, &kept));
	EXPECT(kept == 0, "a write no wait confirmed: released, kept %d", (int)kept);
	STATUS(cubehip_buffer_size(r, &size), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_recycle(r, &kept), CUBEHIP_ERROR_INVALID_HANDLE);
	EXPECT(kept == 0, "an invalid handle leaves kept 0, not %d", (int)kept);
	OK(cubehip_buffer_alloc(dev, 0, 16, &r));
	OK(cubehip_buffer_write(r, 0, 0, in, 16));
	OK(cubehip_device_sync(dev, 0));
	/* Confirmed; kept unless the stream still holds the copy's references (a GPU's drop
	 * queue lets them go at its next fence): either way the handle says which. */
	OK(cubehip_buffer_recycle(r, &kept));
	EXPECT(kept == 0 || kept == 1, "kept %d", (int)kept);
	if (kept) {
		memset(out, 0, 16);
		OK(cubehip_buffer_write(r, 0, 0, in + 4, 16));
		OK(cubehip_buffer_read(r, 0, 0, out, 16));
		EXPECT(memcmp(in + 4, out, 16) == 0, "a kept buffer round-trips");
		OK(cubehip_buffer_release(r));
	} else {
		STATUS(cubehip_buffer_release(r), CUBEHIP_ERROR_INVALID_HANDLE);
	}

	/* A device handle is not a buffer handle, whatever its bits. */
	cubehip_buffer wrong = {dev.id};
	STATUS(cubehip_buffer_check(wrong), CUBEHIP_ERROR_INVALID_HANDLE);
	EXPECT(strstr(cubehip_last_error(), "buffer") != NULL, "%s", cubehip_last_error());
}

static void test_kernels(cubehip_device dev) {
	const cubehip_access w[] = {CUBEHIP_ACCESS_WRITE};
	cubehip_kernel k;
	STATUS(cubehip_kernel_create(dev, NULL, &k), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_kernel_desc d = {.size = sizeof d, .source = fill_src, .entry = NULL};
	STATUS(cubehip_kernel_create(dev, &d, &k), CUBEHIP_ERROR_INVALID_ARGUMENT);
	d.entry = "fill";
	d.size = 8;
	STATUS(cubehip_kernel_create(dev, &d, &k), CUBEHIP_ERROR_INVALID_ARGUMENT);
	const cubehip_access badacc[] = {(cubehip_access)9};
	d.size = sizeof d;
	d.access = badacc;
	d.access_count = 1;
	STATUS(cubehip_kernel_create(dev, &d, &k), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* A compile error, with the compiler's log. */
	const char* broken = "extern \"C\" __global__ void broken(unsigned* out) { out[0] = undeclared_name; }\n";
	cubehip_kernel kb = make_kernel(dev, broken, "broken", w, 1);
	STATUS(cubehip_kernel_compile(kb), CUBEHIP_ERROR_COMPILE);
	size_t len = 0;
	OK(cubehip_kernel_log(kb, NULL, 0, &len));
	EXPECT(len > 0, "log length");
	char* log = malloc(len + 1);
	OK(cubehip_kernel_log(kb, log, len + 1, NULL));
	EXPECT(strstr(log, "undeclared_name") != NULL, "log names the error: %s", log);
	char tiny[4];
	OK(cubehip_kernel_log(kb, tiny, sizeof tiny, &len));
	EXPECT(strlen(tiny) == 3, "truncated and terminated");
	STATUS(cubehip_kernel_log(kb, NULL, 10, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	free(log);

	/* The failed compile is carried by the outputs of a launch of that kernel. */
	cubehip_buffer out;
	OK(cubehip_buffer_alloc(dev, 0, 64 * 4, &out));
	uint32_t zeros[64] = {0};
	OK(cubehip_buffer_write(out, 0, 0, zeros, sizeof zeros));
	cubehip_arg a[] = {buf_arg(out)};
	const uint32_t g[3] = {1, 1, 1};
	cubehip_status s = cubehip_launch(kb, 0, g, a, 1);
	EXPECT(s == CUBEHIP_SUCCESS || s == CUBEHIP_ERROR_COMPILE, "launch of a broken kernel: %s", cubehip_status_string(s));
	STATUS(cubehip_buffer_read(out, 0, 0, zeros, sizeof zeros), CUBEHIP_ERROR_COMPILE);
	STATUS(cubehip_buffer_check(out), CUBEHIP_ERROR_COMPILE);
	OK(cubehip_kernel_destroy(kb));
	STATUS(cubehip_kernel_destroy(kb), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_kernel_compile(kb), CUBEHIP_ERROR_INVALID_HANDLE);
	/* A new write clears it. */
	OK(cubehip_buffer_write(out, 0, 0, zeros, sizeof zeros));
	OK(cubehip_buffer_check(out));
	OK(cubehip_buffer_release(out));
}

static void test_launches(cubehip_device dev) {
	enum { N = 1000 };
	const cubehip_access w[] = {CUBEHIP_ACCESS_WRITE};
	const cubehip_access rw[] = {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_WRITE};
	cubehip_kernel fill = make_kernel(dev, fill_src, "fill", w, 1);
	cubehip_kernel add = make_kernel(dev, add_src, "add", rw, 2);
	OK(cubehip_kernel_compile(fill));
	cubehip_buffer a, b;
	OK(cubehip_buffer_alloc(dev, 0, N * 4, &a));
	OK(cubehip_buffer_alloc(dev, 0, N * 4, &b));
	const uint32_t g[3] = {(N + 63) / 64, 1, 1};
	cubehip_arg fa[] = {buf_arg(a), u32_arg(100), u32_arg(N)};
	OK(cubehip_launch(fill, 0, g, fa, 3));
	cubehip_arg aa[] = {buf_arg(a), buf_arg(b), u32_arg(N)};
	OK(cubehip_launch(add, 3, g, aa, 3)); /* another stream: ordered after a's last write */
	uint32_t out[N];
	OK(cubehip_buffer_read(b, 0, 0, out, sizeof out));
	for (int i = 0; i < N; i++) EXPECT(out[i] == 100u + i + 1u, "out[%d] = %u", i, out[i]);

	/* Malformed launches queue nothing. */
	STATUS(cubehip_launch(fill, 0, NULL, fa, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_launch(fill, 0, g, NULL, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_arg badkind[] = {buf_arg(a), u32_arg(1), u32_arg(N)};
	badkind[1].kind = 99;
	STATUS(cubehip_launch(fill, 0, g, badkind, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_arg toobig[] = {buf_arg(a), u32_arg(1), u32_arg(N)};
	toobig[1].v.u64 = 1ull << 40;
	STATUS(cubehip_launch(fill, 0, g, toobig, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_arg notbuf[] = {buf_arg(a), u32_arg(1), u32_arg(N)};
	notbuf[0].v.buffer.buffer.id = fill.id; /* a kernel's id where a buffer belongs */
	STATUS(cubehip_launch(fill, 0, g, notbuf, 3), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_launch(fill, 0, g, fa, 5000), CUBEHIP_ERROR_INVALID_ARGUMENT);
	cubehip_arg twobufs[] = {buf_arg(a), buf_arg(b), u32_arg(N)};
	STATUS(cubehip_launch(fill, 0, g, twobufs, 3), CUBEHIP_ERROR_INVALID_ARGUMENT); /* fill declares one buffer */
	/* Nothing above touched a. */
	OK(cubehip_buffer_read(a, 0, 0, out, sizeof out));
	EXPECT(out[5] == 105, "a untouched: %u", out[5]);

	/* A buffer of another device. */
	cubehip_device other;
	OK(cubehip_device_open(platform, 0, NULL, &other));
	cubehip_buffer ob;
	OK(cubehip_buffer_alloc(other, 0, N * 4, &ob));
	cubehip_arg foreign[] = {buf_arg(ob), u32_arg(1), u32_arg(N)};
	STATUS(cubehip_launch(fill, 0, g, foreign, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	OK(cubehip_device_close(other));
	/* Closing a device invalidates its handles. */
	STATUS(cubehip_buffer_check(ob), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_buffer_release(ob), CUBEHIP_ERROR_INVALID_HANDLE);

	/* A dynamic cube count. */
	cubehip_buffer count;
	OK(cubehip_buffer_alloc(dev, 0, 12, &count));
	uint32_t c3[3] = {(N + 63) / 64, 1, 1};
	OK(cubehip_buffer_write(count, 0, 0, c3, sizeof c3));
	cubehip_arg fd[] = {buf_arg(b), u32_arg(7), u32_arg(N)};
	OK(cubehip_launch_dynamic(fill, 0, count, fd, 3));
	OK(cubehip_buffer_read(b, 0, 0, out, sizeof out));
	EXPECT(out[N - 1] == 7u + N - 1u, "dynamic launch: %u", out[N - 1]);

	OK(cubehip_buffer_release(count));
	OK(cubehip_buffer_release(a));
	OK(cubehip_buffer_release(b));
	OK(cubehip_kernel_destroy(fill));
	OK(cubehip_kernel_destroy(add));
}

static void test_graphs_profiles_memory(cubehip_device dev) {
	enum { N = 256 };
	const cubehip_access w[] = {CUBEHIP_ACCESS_WRITE};
	cubehip_kernel fill = make_kernel(dev, fill_src, "fill", w, 1);
	cubehip_buffer a;
	OK(cubehip_buffer_alloc(dev, 2, N * 4, &a));
	const uint32_t g[3] = {N / 64, 1, 1};
	cubehip_arg fa[] = {buf_arg(a), u32_arg(40), u32_arg(N)};
	OK(cubehip_launch(fill, 2, g, fa, 3)); /* warm-up: compiled, pools sized */
	OK(cubehip_device_sync(dev, 2));
	uint32_t zeros[N] = {0}, out[N];
	OK(cubehip_buffer_write(a, 2, 0, zeros, sizeof zeros));

	OK(cubehip_capture_begin(dev, 2));
	OK(cubehip_launch(fill, 2, g, fa, 3));
	cubehip_graph gr;
	STATUS(cubehip_capture_end(dev, 2, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	OK(cubehip_capture_end(dev, 2, &gr));
	OK(cubehip_buffer_read(a, 2, 0, out, sizeof out));
	EXPECT(out[3] == 0, "a capture records, it does not run: %u", out[3]);
	OK(cubehip_graph_replay(gr));
	OK(cubehip_buffer_read(a, 2, 0, out, sizeof out));
	EXPECT(out[3] == 43, "replayed: %u", out[3]);
	OK(cubehip_graph_destroy(gr));
	STATUS(cubehip_graph_replay(gr), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_graph_destroy(gr), CUBEHIP_ERROR_INVALID_HANDLE);

	/* A write inside a capture cannot be recorded: refused at the call, in the C API's
	 * terms, and the capture ends refused. */
	uint32_t before[N];
	OK(cubehip_buffer_read(a, 2, 0, before, sizeof before));
	OK(cubehip_capture_begin(dev, 2));
	STATUS(cubehip_buffer_write(a, 2, 0, zeros, sizeof zeros), CUBEHIP_ERROR_CAPTURE_REFUSED);
	EXPECT(strstr(cubehip_last_error(), "stream 2 is capturing") != NULL &&
			strstr(cubehip_last_error(), "prepare run") == NULL,
		"the write's refusal: %s", cubehip_last_error());
	/* Stream 130 shares stream 2's device stream (130 mod 128): its work would land in
	 * stream 2's graph, so it is refused, naming both. */
	STATUS(cubehip_launch(fill, 130, g, fa, 3), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "stream 130") != NULL && strstr(cubehip_last_error(), "stream 2") != NULL,
		"names both streams: %s", cubehip_last_error());
	STATUS(cubehip_capture_end(dev, 130, &gr), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_capture_end(dev, 2, &gr), CUBEHIP_ERROR_CAPTURE_REFUSED);
	EXPECT(gr.id == 0, "no graph from a refused capture");
	OK(cubehip_buffer_read(a, 2, 0, out, sizeof out));
	EXPECT(memcmp(out, before, sizeof out) == 0, "the refused write changed the buffer");
	STATUS(cubehip_capture_end(dev, 2, &gr), CUBEHIP_ERROR_INVALID_ARGUMENT); /* none open */
	OK(cubehip_launch(fill, 130, g, fa, 3)); /* no capture open: any stream again */
	OK(cubehip_device_sync(dev, 130));

	cubehip_profile p;
	OK(cubehip_profile_start(dev, 2, &p));
	for (int i = 0; i < 10; i++) OK(cubehip_launch(fill, 2, g, fa, 3));
	uint64_t ns = 0;
	STATUS(cubehip_profile_stop(p, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	OK(cubehip_profile_stop(p, &ns));
	EXPECT(ns > 0, "profiled %llu ns", (unsigned long long)ns);
	STATUS(cubehip_profile_stop(p, &ns), CUBEHIP_ERROR_INVALID_HANDLE);
	OK(cubehip_profile_start(dev, 2, &p));
	OK(cubehip_profile_abandon(p));
	STATUS(cubehip_profile_abandon(p), CUBEHIP_ERROR_INVALID_HANDLE);

	cubehip_memory_usage u = {.size = sizeof u};
	OK(cubehip_memory_usage_get(dev, &u));
	EXPECT(u.bytes_in_use >= N * 4 && u.bytes_reserved >= u.bytes_in_use, "usage %llu of %llu",
		(unsigned long long)u.bytes_in_use, (unsigned long long)u.bytes_reserved);
	cubehip_memory_usage us = {.size = 3};
	STATUS(cubehip_memory_usage_get(dev, &us), CUBEHIP_ERROR_INVALID_ARGUMENT);
	size_t len = 0;
	OK(cubehip_memory_report(dev, NULL, 0, &len));
	char* rep = malloc(len + 1);
	OK(cubehip_memory_report(dev, rep, len + 1, NULL));
	EXPECT(rep[0] == '[' && strstr(rep, "Dynamic") != NULL, "report %s", rep);
	free(rep);
	OK(cubehip_memory_set_allocation_mode(dev, 2, CUBEHIP_ALLOCATION_PERSISTENT));
	OK(cubehip_memory_set_allocation_mode(dev, 2, CUBEHIP_ALLOCATION_AUTO));
	STATUS(cubehip_memory_set_allocation_mode(dev, 2, 7), CUBEHIP_ERROR_INVALID_ARGUMENT);
	OK(cubehip_buffer_release(a));
	OK(cubehip_memory_cleanup(dev));
	OK(cubehip_kernel_destroy(fill));
}

/* Many threads, each with its own stream and buffer, launching and reading at once. */
struct worker {
	cubehip_device dev;
	cubehip_kernel fill;
	int index;
	int failed;
};

static void* work(void* arg) {
	struct worker* w = arg;
	enum { N = 512 };
	cubehip_buffer b;
	if (cubehip_buffer_alloc(w->dev, (uint64_t)w->index, N * 4, &b) != CUBEHIP_SUCCESS) {
		w->failed = 1;
		return NULL;
	}
	const uint32_t g[3] = {N / 64, 1, 1};
	for (int round = 0; round < 50; round++) {
		uint32_t v = (uint32_t)(w->index * 1000 + round);
		cubehip_arg a[] = {buf_arg(b), u32_arg(v), u32_arg(N)};
		uint32_t out[N];
		if (cubehip_launch(w->fill, (uint64_t)w->index, g, a, 3) != CUBEHIP_SUCCESS ||
			cubehip_buffer_read(b, (uint64_t)w->index, 0, out, sizeof out) != CUBEHIP_SUCCESS) {
			fprintf(stderr, "thread %d: %s\n", w->index, cubehip_last_error());
			w->failed = 1;
			break;
		}
		for (int i = 0; i < N; i++)
			if (out[i] != v + (uint32_t)i) {
				fprintf(stderr, "thread %d round %d: out[%d] = %u, want %u\n", w->index, round, i, out[i], v + i);
				w->failed = 1;
				break;
			}
		if (w->failed) break;
	}
	/* A failure on this thread leaves its message here, not on another thread. */
	cubehip_buffer gone = {0};
	cubehip_buffer_check(gone);
	if (strstr(cubehip_last_error(), "zero handle") == NULL) w->failed = 1;
	cubehip_buffer_release(b);
	return NULL;
}

static void test_threads(cubehip_device dev) {
	enum { T = 8 };
	const cubehip_access w[] = {CUBEHIP_ACCESS_WRITE};
	cubehip_kernel fill = make_kernel(dev, fill_src, "fill", w, 1);
	OK(cubehip_kernel_compile(fill));
	pthread_t th[T];
	struct worker ws[T];
	for (int i = 0; i < T; i++) {
		ws[i] = (struct worker){.dev = dev, .fill = fill, .index = i};
		EXPECT(pthread_create(&th[i], NULL, work, &ws[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		EXPECT(!ws[i].failed, "thread %d failed", i);
	}
	OK(cubehip_kernel_destroy(fill));
}

/* Arguments in the kernel's declared order: scalars first, in the middle and last; every
 * scalar width; a struct by value; buffers at an offset; reads and writes at an offset. */
static const char* order_src =
	"struct pair { char c; double d; };\n"
	"extern \"C\" __global__ void mixed(int n, signed char a, const unsigned* in, short b, pair p,\n"
	"    unsigned char c, unsigned short d, unsigned* out, long long e, float f, double g) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) out[i] = in[i] + a + b + c + d + (unsigned)e + (unsigned)f + (unsigned)g + p.c + (unsigned)p.d;\n"
	"}\n";

static void test_argument_order(cubehip_device dev) {
	enum { N = 100 };
	const cubehip_access acc[] = {CUBEHIP_ACCESS_READ, CUBEHIP_ACCESS_WRITE};
	cubehip_kernel k = make_kernel(dev, order_src, "mixed", acc, 2);
	OK(cubehip_kernel_compile(k));
	cubehip_buffer in, out;
	OK(cubehip_buffer_alloc(dev, 0, (N + 8) * 4, &in));
	OK(cubehip_buffer_alloc(dev, 0, N * 4, &out));
	uint32_t host[N + 8];
	for (int i = 0; i < N + 8; i++) host[i] = (uint32_t)i;
	OK(cubehip_buffer_write(in, 0, 0, host, sizeof host));
	struct pair {
		char c;
		double d;
	} p = {3, 4.0};
	cubehip_arg a[11] = {0};
	a[0].kind = CUBEHIP_ARG_I32, a[0].v.i64 = N;
	a[1].kind = CUBEHIP_ARG_I8, a[1].v.i64 = -1;
	a[2] = buf_arg(in);
	a[2].v.buffer.offset = 8 * 4; /* the kernel sees in + 8 */
	a[3].kind = CUBEHIP_ARG_I16, a[3].v.i64 = 2;
	a[4].kind = CUBEHIP_ARG_BYTES, a[4].v.bytes.data = &p, a[4].v.bytes.size = sizeof p, a[4].v.bytes.align = 8;
	a[5].kind = CUBEHIP_ARG_U8, a[5].v.u64 = 5;
	a[6].kind = CUBEHIP_ARG_U16, a[6].v.u64 = 6;
	a[7] = buf_arg(out);
	a[8].kind = CUBEHIP_ARG_I64, a[8].v.i64 = 7;
	a[9].kind = CUBEHIP_ARG_F32, a[9].v.f32 = 8.0f;
	a[10].kind = CUBEHIP_ARG_F64, a[10].v.f64 = 9.0;
	const uint32_t g[3] = {(N + 63) / 64, 1, 1};
	OK(cubehip_launch(k, 0, g, a, 11));
	uint32_t got[N];
	OK(cubehip_buffer_read(out, 0, 0, got, sizeof got));
	for (int i = 0; i < N; i++)
		EXPECT(got[i] == (uint32_t)(i + 8) - 1 + 2 + 5 + 6 + 7 + 8 + 9 + 3 + 4, "mixed out[%d] = %u", i, got[i]);

	/* Signedness may differ, as C converts: an unsigned for int n, a signed for unsigned char c. */
	cubehip_arg mixed_sign[11];
	memcpy(mixed_sign, a, sizeof a);
	mixed_sign[0] = cubehip_arg_u32(N);
	mixed_sign[5] = cubehip_arg_i8(5);
	OK(cubehip_launch(k, 0, g, mixed_sign, 11));
	OK(cubehip_buffer_read(out, 0, 0, got, sizeof got));
	EXPECT(got[N - 1] == (uint32_t)(N - 1 + 8) - 1 + 2 + 5 + 6 + 7 + 8 + 9 + 3 + 4, "mixed out[N-1] = %u", got[N - 1]);

	/* Each kind of mismatch is refused at the call, naming the argument, and changes nothing. */
	cubehip_arg bad[11];
	memcpy(bad, a, sizeof a);
	bad[0].kind = CUBEHIP_ARG_I64; /* int given 8 bytes */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "argument 0") != NULL, "names the argument: %s", cubehip_last_error());
	STATUS(cubehip_launch(k, 0, g, a, 10), CUBEHIP_ERROR_INVALID_ARGUMENT); /* one missing */
	memcpy(bad, a, sizeof a);
	bad[2] = bad[0]; /* a scalar where a buffer belongs */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	memcpy(bad, a, sizeof a);
	bad[7].access = CUBEHIP_ACCESS_READ; /* the kernel declares out WRITE */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	memcpy(bad, a, sizeof a);
	bad[1].v.i64 = 300; /* does not fit a signed char */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	memcpy(bad, a, sizeof a);
	bad[4].v.bytes.align = 3;
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	memcpy(bad, a, sizeof a);
	bad[4].v.bytes.data = NULL;
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	/* The right width, the wrong kind: the platforms list sizes only, so it is the
	 * kernel's declaration that refuses an integer for a float and a float for an int. */
	memcpy(bad, a, sizeof a);
	bad[9] = cubehip_arg_u32(8); /* float f */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "argument 9 (f): uint32_t given, the kernel takes float") != NULL,
		"names the argument and both types in C's terms: %s", cubehip_last_error());
	memcpy(bad, a, sizeof a);
	bad[0] = cubehip_arg_f32((float)N); /* int n */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "argument 0 (n): float given, the kernel takes int") != NULL, "%s",
		cubehip_last_error());
	memcpy(bad, a, sizeof a);
	bad[10] = cubehip_arg_u64(9); /* double g */
	STATUS(cubehip_launch(k, 0, g, bad, 11), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "uint64_t given, the kernel takes double") != NULL, "%s", cubehip_last_error());
	OK(cubehip_buffer_check(out));
	OK(cubehip_buffer_read(out, 0, 0, got, sizeof got));
	EXPECT(got[0] == 8u - 1 + 2 + 5 + 6 + 7 + 8 + 9 + 3 + 4, "out untouched by the refused launches: %u", got[0]);

	/* Reads and writes at an offset. */
	uint32_t four[4] = {90, 91, 92, 93}, back[4];
	OK(cubehip_buffer_write(out, 0, 16, four, sizeof four));
	OK(cubehip_buffer_read(out, 0, 12, back, sizeof back));
	EXPECT(back[0] == got[3] && back[1] == 90 && back[3] == 92, "offset round trip %u %u %u", back[0], back[1], back[3]);
	STATUS(cubehip_buffer_read(out, 0, N * 4 - 8, back, sizeof back), CUBEHIP_ERROR_INVALID_ARGUMENT);

	OK(cubehip_buffer_release(in));
	OK(cubehip_buffer_release(out));
	OK(cubehip_kernel_destroy(k));
}

int main(void) {
	platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	test_statuses();
	test_devices();
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));
	test_buffers(dev);
	test_kernels(dev);
	test_launches(dev);
	test_argument_order(dev);
	test_graphs_profiles_memory(dev);
	test_threads(dev);
	OK(cubehip_device_close(dev));
	printf("abi_test: %d checks passed on %s\n", checks, platform);
	return 0;
}
