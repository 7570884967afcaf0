/* The host side of the crossing measurement (see ../crossing.go): loops of an empty-kernel
 * launch and a stream sync, from C straight to the driver and through the Go library's
 * exports, interleaved round by round; medians of the rounds and their ratio to raw.
 *
 *   cc -O2 host.c -L. -lcrossing -Wl,-rpath,'$ORIGIN' -o crossing && ./crossing */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int crossing_driver_open(void);
int crossing_driver_launch(void);
int crossing_driver_sync(void);
int crossing_noop(void);
int crossing_launch(void);
int crossing_sync(void);

enum { ROUNDS = 31, N = 4000 };

static uint64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
	double x = *(const double*)a, y = *(const double*)b;
	return (x > y) - (x < y);
}

typedef struct {
	const char* name;
	int (*step)(void);
} loop;

static int raw_launch_sync(void) { return crossing_driver_launch() | crossing_driver_sync(); }
static int go_launch_sync(void) { return crossing_launch() | crossing_sync(); }
static int raw_sync(void) { return crossing_driver_sync(); }
static int go_sync(void) { return crossing_sync(); }
static int go_noop(void) { return crossing_noop(); }
static int two_noops_around_raw(void) { return crossing_noop() | raw_launch_sync() | crossing_noop(); }

static const loop loops[] = {
	{"raw launch + sync", raw_launch_sync},
	{"Go launch + Go sync", go_launch_sync},
	{"Go no-op, raw launch + sync, Go no-op", two_noops_around_raw},
	{"raw sync, idle stream", raw_sync},
	{"Go sync, idle stream", go_sync},
	{"Go no-op", go_noop},
};
enum { LOOPS = sizeof loops / sizeof loops[0] };

int main(void) {
	int r = crossing_driver_open();
	if (r != 0) {
		fprintf(stderr, "crossing: no CUDA driver or device (status %d)\n", r);
		return 1;
	}
	static double t[LOOPS][ROUNDS];
	for (int round = 0; round < ROUNDS; round++) {
		for (int l = 0; l < LOOPS; l++) {
			for (int i = 0; i < N / 10; i++) loops[l].step(); /* warm */
			uint64_t start = now_ns();
			for (int i = 0; i < N; i++)
				if (loops[l].step() != 0) {
					fprintf(stderr, "crossing: %s failed\n", loops[l].name);
					return 1;
				}
			t[l][round] = (double)(now_ns() - start) / N;
		}
	}
	double ratio_raw[ROUNDS];
	for (int l = 0; l < LOOPS; l++) {
		int base = l < 3 ? 0 : (l < 5 ? 3 : -1);
		if (base >= 0)
			for (int i = 0; i < ROUNDS; i++) ratio_raw[i] = t[l][i] / t[base][i];
		qsort(t[l], ROUNDS, sizeof(double), cmp);
		if (base >= 0) {
			qsort(ratio_raw, ROUNDS, sizeof(double), cmp);
			printf("%-40s %9.1f ns  (quartiles %.1f-%.1f)  x raw %.3f\n", loops[l].name, t[l][ROUNDS / 2],
				t[l][ROUNDS / 4], t[l][3 * ROUNDS / 4], ratio_raw[ROUNDS / 2]);
		} else {
			printf("%-40s %9.1f ns  (quartiles %.1f-%.1f)\n", loops[l].name, t[l][ROUNDS / 2], t[l][ROUNDS / 4],
				t[l][3 * ROUNDS / 4]);
		}
	}
	return 0;
}
