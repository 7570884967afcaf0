/* modulefile_test.c: modules of compiled code through the C ABI, on the device named by
 * $CUBEHIP_PLATFORM (the cpu device by default): the file argv[1] (the device's code of a
 * module, written by modulefile_test.go) loaded by path and given as desc.code, its
 * kernel launched with the access given, and the errors: a kernel without access, an
 * entry the code lacks, code with source, a file that is not there. Exits non-zero on the
 * first failed check. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubehip.h>

#include "check.h"

/* run launches add_one of m over {1, 2, 3} and checks it added one to each. */
static void run(cubehip_device dev, cubehip_module m) {
	cubehip_kernel add;
	const cubehip_access rw[] = {CUBEHIP_ACCESS_READ_WRITE};
	cubehip_kernel_desc d = {.size = sizeof d, .entry = "add_one", .block = {32, 1, 1}, .access = rw, .access_count = 1};
	OK(cubehip_module_kernel(m, &d, &add));
	cubehip_buffer x;
	float v[3] = {1, 2, 3};
	OK(cubehip_buffer_alloc(dev, 0, sizeof v, &x));
	OK(cubehip_buffer_write(x, 0, 0, v, sizeof v));
	const uint32_t one[3] = {1, 1, 1};
	cubehip_arg a[] = {buf_arg(x), {.kind = CUBEHIP_ARG_U32, .v.u64 = 3}};
	OK(cubehip_launch(add, 0, one, a, 2));
	OK(cubehip_buffer_read(x, 0, 0, v, sizeof v));
	EXPECT(v[0] == 2 && v[1] == 3 && v[2] == 4, "add_one gave %g %g %g, want 2 3 4", v[0], v[1], v[2]);
	OK(cubehip_buffer_release(x));
	OK(cubehip_kernel_destroy(add));
}

int main(int argc, char** argv) {
	EXPECT(argc == 2, "usage: modulefile_test CODE-FILE");
	const char* platform = getenv("CUBEHIP_PLATFORM");
	if (platform == NULL || platform[0] == 0) platform = "cpu";
	cubehip_device dev;
	OK(cubehip_device_open(platform, 0, NULL, &dev));

	/* By path. */
	cubehip_module m;
	OK(cubehip_module_load_file(dev, argv[1], &m));
	OK(cubehip_module_compile(m));
	run(dev, m);

	/* A kernel of code takes buffers only with their access: there is no declaration. */
	cubehip_kernel bare;
	cubehip_kernel_desc d = {.size = sizeof d, .entry = "add_one", .block = {32, 1, 1}};
	OK(cubehip_module_kernel(m, &d, &bare));
	cubehip_buffer x;
	OK(cubehip_buffer_alloc(dev, 0, 16, &x));
	const uint32_t one[3] = {1, 1, 1};
	cubehip_arg a[] = {buf_arg(x), {.kind = CUBEHIP_ARG_U32, .v.u64 = 3}};
	STATUS(cubehip_launch(bare, 0, one, a, 2), CUBEHIP_ERROR_INVALID_ARGUMENT);
	EXPECT(strstr(cubehip_last_error(), "give IO") != NULL, "the refusal says what to do: %s", cubehip_last_error());
	OK(cubehip_kernel_destroy(bare));

	/* An entry the code lacks is no compile error: the code has no such kernel. */
	cubehip_kernel nope;
	d.entry = "nope";
	OK(cubehip_module_kernel(m, &d, &nope));
	cubehip_status st = cubehip_kernel_compile(nope);
	EXPECT(st != CUBEHIP_SUCCESS && st != CUBEHIP_ERROR_COMPILE, "an entry the code lacks: %s", cubehip_status_string(st));
	EXPECT(strstr(cubehip_last_error(), "no such kernel") != NULL, "it says so: %s", cubehip_last_error());
	OK(cubehip_kernel_destroy(nope));
	OK(cubehip_module_destroy(m));

	/* The same bytes as desc.code. */
	FILE* f = fopen(argv[1], "rb");
	EXPECT(f != NULL, "open %s", argv[1]);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	EXPECT(n > 0, "%s is empty", argv[1]);
	char* code = malloc((size_t)n);
	EXPECT(code != NULL && fread(code, 1, (size_t)n, f) == (size_t)n, "read %s", argv[1]);
	fclose(f);
	cubehip_module_desc md = {.size = sizeof md, .code = code, .code_size = (size_t)n};
	OK(cubehip_module_create(dev, &md, &m));
	free(code); /* the module copied it */
	run(dev, m);
	OK(cubehip_module_destroy(m));

	/* The file's module without making one: compiled code, its size asked first. */
	int32_t is_source = -1;
	size_t len = 0;
	OK(cubehip_module_file_read(argv[1], &is_source, NULL, 0, &len));
	EXPECT(is_source == 0 && len > 0, "a code file: is_source %d, %zu bytes", (int)is_source, len);
	char* bytes = malloc(len);
	EXPECT(bytes != NULL, "malloc");
	OK(cubehip_module_file_read(argv[1], &is_source, bytes, len, &len));
	md = (cubehip_module_desc){.size = sizeof md, .code = bytes, .code_size = len};
	OK(cubehip_module_create(dev, &md, &m));
	free(bytes);
	run(dev, m);
	OK(cubehip_module_destroy(m));
	STATUS(cubehip_module_file_read("/nonexistent/k.co", &is_source, NULL, 0, &len), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_module_file_read(argv[1], NULL, NULL, 0, &len), CUBEHIP_ERROR_INVALID_ARGUMENT);

	/* Code with source, code without its size, no file, junk. */
	md = (cubehip_module_desc){.size = sizeof md, .source = "x", .code = argv[1], .code_size = 4};
	STATUS(cubehip_module_create(dev, &md, &m), CUBEHIP_ERROR_INVALID_ARGUMENT);
	md = (cubehip_module_desc){.size = sizeof md, .code = argv[1]};
	STATUS(cubehip_module_create(dev, &md, &m), CUBEHIP_ERROR_INVALID_ARGUMENT);
	/* A host built before desc.code: its size ends at name_count, so code is not read. */
	md = (cubehip_module_desc){.size = offsetof(cubehip_module_desc, code), .code = argv[1], .code_size = 4};
	STATUS(cubehip_module_create(dev, &md, &m), CUBEHIP_ERROR_INVALID_ARGUMENT);
	STATUS(cubehip_module_load_file(dev, "/nonexistent/k.co", &m), CUBEHIP_ERROR_INVALID_ARGUMENT);

	EXPECT(strstr(cubehip_last_error(), "/nonexistent/k.co") != NULL, "the error names the file: %s", cubehip_last_error());
	md = (cubehip_module_desc){.size = sizeof md, .code = "junk", .code_size = 4};
	OK(cubehip_module_create(dev, &md, &m));
	st = cubehip_module_compile(m);
	EXPECT(st != CUBEHIP_SUCCESS && st != CUBEHIP_ERROR_COMPILE, "junk code loaded: %s", cubehip_status_string(st));
	OK(cubehip_module_destroy(m));

	OK(cubehip_buffer_release(x));
	OK(cubehip_device_close(dev));
	printf("modulefile_test: %d checks passed\n", checks);
	return 0;
}
