/* <string.h> for hiprtc before ROCm 6.1: memcpy and memset come with hiprtc's built-in
 * preamble; the other functions device code calls are defined here. */
#pragma once
#include <stddef.h>
__device__ inline int memcmp(const void* a, const void* b, size_t n) {
	const unsigned char* p = (const unsigned char*)a;
	const unsigned char* q = (const unsigned char*)b;
	for (size_t i = 0; i < n; i++)
		if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
	return 0;
}
__device__ inline size_t strlen(const char* s) {
	size_t n = 0;
	while (s[n]) n++;
	return n;
}
__device__ inline int strcmp(const char* a, const char* b) {
	while (*a && *a == *b) a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}
