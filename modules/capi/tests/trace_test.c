/* trace_test.c: traces through the C ABI, on the device named by $CUBEHIP_PLATFORM (the
 * cpu device by default). Built and run by trace_test.go, with a directory to write in:
 *
 *   trace_test DIR         start, stop and their errors; the trace written to DIR/trace.json
 *   trace_test DIR exit    a host that never closes its device: a launch, then
 *                          cubehip_trace_flush and exit(), for $CUBEHIP_TRACE to hold it
 *
 * Exits non-zero on the first failed check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

static const char* src =
	"#include <hip/hip_runtime.h>\n"
	"extern \"C\" __global__ void traced_inc(float* x, unsigned n) {\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) x[i] += 1.0f;\n"
	"}\n";

/* work compiles and launches traced_inc once, with a write before it and a read after. */
static void work(cubehip_device dev) {
	enum { N = 100 };
	const cubehip_access acc[] = {CUBEHIP_ACCESS_READ_WRITE};
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "traced_inc", .block = {64, 1, 1}, .access = acc,
		.access_count = 1};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));
	float x[N];
	for (int i = 0; i < N; i++) x[i] = (float)i;
	cubehip_buffer b;
	OK(cubehip_buffer_alloc(dev, 0, sizeof x, &b));
	OK(cubehip_buffer_write(b, 0, 0, x, sizeof x));
	const uint32_t g[3] = {(N + 63) / 64, 1, 1};
	cubehip_arg args[] = {buf_arg(b), u32_arg(N)};
	OK(cubehip_launch(k, 0, g, args, 2));
	OK(cubehip_buffer_read(b, 0, 0, x, sizeof x));
	EXPECT(x[7] == 8.0f, "x[7] = %g after the launch", (double)x[7]);
	OK(cubehip_buffer_release(b));
	OK(cubehip_kernel_destroy(k));
}

/* slurp is the file's text (malloc'd), or NULL when it cannot be read. */
static char* slurp(const char* path) {
	FILE* f = fopen(path, "rb");
	if (f == NULL) return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

int main(int argc, char** argv) {
	EXPECT(argc >= 2, "usage: trace_test DIR [exit]");
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));

	if (argc > 2 && strcmp(argv[2], "exit") == 0) {
		/* A host that ends without cubehip_device_close: the flush is what writes
		 * $CUBEHIP_TRACE's trace. */
		work(dev);
		OK(cubehip_trace_flush(dev));
		printf("trace_test exit: %d checks passed on %s\n", checks, platform);
		exit(0);
	}

	char path[4096], missing[4096];
	snprintf(path, sizeof path, "%s/trace.json", argv[1]);
	snprintf(missing, sizeof missing, "%s/no-such-dir/trace.json", argv[1]);

	/* No trace open: a stop is refused and writes nothing; a flush does nothing. */
	STATUS(cubehip_trace_stop(dev, path), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "cubehip_trace_stop: ") == cubehip_last_error(), "the message names the call: %s",
		cubehip_last_error());
	EXPECT(slurp(path) == NULL, "a refused stop wrote %s", path);
	OK(cubehip_trace_flush(dev));

	OK(cubehip_trace_start(dev));
	STATUS(cubehip_trace_start(dev), CUBEHIP_ERROR_INVALID_ARGUMENT); /* one trace at a time */
	work(dev);
	/* A path that cannot take the file leaves the trace open for another try. */
	STATUS(cubehip_trace_stop(dev, NULL), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_trace_stop(dev, ""), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_trace_stop(dev, missing), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), missing) != NULL, "the message names the path: %s", cubehip_last_error());
	OK(cubehip_trace_flush(dev)); /* a trace with no file of its own: nothing to flush */
	OK(cubehip_trace_stop(dev, path));
	char* text = slurp(path);
	EXPECT(text != NULL, "no trace at %s", path);
	EXPECT(strstr(text, "\"traceEvents\"") != NULL, "not a Chrome trace: %.200s", text);
	EXPECT(strstr(text, "\"name\":\"traced_inc\",\"cat\":\"launch\"") != NULL, "no launch of traced_inc: %s", text);
	EXPECT(strstr(text, "\"name\":\"traced_inc\",\"cat\":\"compile\"") != NULL, "no compile of traced_inc: %s", text);
	EXPECT(strstr(text, "\"cat\":\"copy\"") != NULL, "no copy: %s", text);
	STATUS(cubehip_trace_stop(dev, path), CUBEHIP_ERROR_INVALID_ARGUMENT); /* stopped already */

	/* Handles: the zero handle, a made-up one, a closed device. */
	cubehip_device zero = {0}, bogus = {.id = 0xdeadbeef};
	STATUS(cubehip_trace_start(zero), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_trace_flush(bogus), CUBEHIP_ERROR_INVALID_HANDLE);
	STATUS(cubehip_trace_stop(bogus, path), CUBEHIP_ERROR_INVALID_HANDLE);
	OK(cubehip_trace_start(dev));
	OK(cubehip_device_close(dev)); /* a trace of the host's own is dropped at close */
	STATUS(cubehip_trace_stop(dev, path), CUBEHIP_ERROR_INVALID_HANDLE);
	printf("trace_test: %d checks passed on %s\n", checks, platform);
	return 0;
}
