/* environ_test.c: a variable the host sets after the library is loaded (setenv, as
 * Python's os.environ does) is the one cubehip reads: CUBEHIP_CACHE_DIR set before
 * cubehip_device_open places the kernel disk cache there. Built and run by environ_test.go
 * against a freshly built libcubehip.so, on the cpu device; exits non-zero on the first
 * failed check. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cubehip.h>

#include "check.h"

static int entries(const char* dir) {
	DIR* d = opendir(dir);
	if (d == NULL) return 0;
	int n = 0;
	for (struct dirent* e; (e = readdir(d)) != NULL;)
		if (e->d_name[0] != '.') n++;
	closedir(d);
	return n;
}

int main(int argc, char** argv) {
	EXPECT(argc == 2, "usage: environ_test DIR (an empty directory, mode 0700)");
	/* The library was loaded with the process; the variable comes after. */
	EXPECT(setenv("CUBEHIP_CACHE_DIR", argv[1], 1) == 0, "setenv");

	cubehip_device dev;
	OK(cubehip_device_open("cpu", 0, NULL, &dev));
	static const char src[] = "extern \"C\" __global__ void environ_probe(float* x) { x[threadIdx.x] = 2.0f; }";
	cubehip_kernel_desc d = {.size = sizeof d, .source = src, .entry = "environ_probe", .block = {4, 1, 1}};
	cubehip_kernel k;
	OK(cubehip_kernel_create(dev, &d, &k));
	OK(cubehip_kernel_compile(k));
	char kernels[4096];
	snprintf(kernels, sizeof kernels, "%s/kernels", argv[1]);
	EXPECT(entries(kernels) >= 1, "no kernel cached under %s: CUBEHIP_CACHE_DIR set by the host was ignored", kernels);
	OK(cubehip_kernel_destroy(k));
	OK(cubehip_device_close(dev));
	printf("environ: %d checks passed\n", checks);
	return 0;
}
