// The C library headers kernels include, in both spellings: their limits and
// constants, and the device functions HIP offers under their names (printf, assert,
// memcpy, the math functions, also in std).
#include <hip/hip_runtime.h>
#include <assert.h>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct Pair {
	int key;
	double value;
};

// Thread i writes the limits (thread 0), or math on in[i]. verbose: print what was done.
extern "C" __global__ void c_library(const float* in, float* f, double* d, long long* l, int n, int verbose) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	assert(n > 0);
	if (i == 0) {
		f[0] = FLT_MAX; f[1] = FLT_MIN; f[2] = FLT_EPSILON; f[3] = HUGE_VALF; f[4] = INFINITY;
		d[0] = DBL_MAX; d[1] = DBL_MIN; d[2] = DBL_EPSILON; d[3] = M_PI; d[4] = M_SQRT2;
		l[0] = INT_MAX; l[1] = INT_MIN; l[2] = UINT_MAX; l[3] = CHAR_BIT; l[4] = LLONG_MAX;
		l[5] = SHRT_MIN; l[6] = INT8_MIN; l[7] = UINT16_MAX; l[8] = INT64_MIN; l[9] = FLT_MANT_DIG + DBL_MANT_DIG;
		l[10] = offsetof(Pair, value); l[11] = sizeof(std::ptrdiff_t) + sizeof(std::size_t) + sizeof(uintptr_t);
		l[12] = (isnan(NAN) ? 1 : 0) + (std::isinf(-INFINITY) ? 2 : 0) + (std::signbit(-0.0f) ? 4 : 0);
		char word[8] = "cubehip";
		char copy[8];
		std::memcpy(copy, word, sizeof word);
		l[13] = std::strlen(copy) + memcmp(copy, word, sizeof word);
		if (verbose) printf("limits written\n");
	}
	if (i < n) {
		const float x = in[i];
		f[8 + i] = std::sqrt(x) + sqrtf(x) + std::fabs(-x) + fmaxf(x, 2.0f) + (float)std::abs(-i);
		d[8 + i] = std::floor((double)x * M_PI) + ldexp(1.0, i % 8);
	}
}
