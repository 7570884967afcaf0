// Package hostmem is C memory for the jit's tests and benchmarks: what the cpu platform
// hands kernels as device pointers is C memory, and _test.go files cannot import "C".
// It also calls the benchmark's plain C anchor loop through a function pointer.
package hostmem

/*
#include <stdlib.h>
#include <string.h>

static void* hostmem_alloc(size_t n) {
	void* p = NULL;
	if (posix_memalign(&p, 64, n ? n : 1) != 0) return NULL;
	memset(p, 0, n);
	return p;
}
typedef void (*vadd_fn)(const float*, const float*, float*, size_t, int);
static void hostmem_call_vadd(void* fn, void* a, void* b, void* c, size_t n, int threads) {
	((vadd_fn)fn)((const float*)a, (const float*)b, (float*)c, n, threads);
}
*/
import "C"

import "unsafe"

// Alloc returns n zeroed bytes of 64-byte aligned C memory, or 0 when out of memory.
func Alloc(n int) uintptr { return uintptr(C.hostmem_alloc(C.size_t(n))) }

// Free releases memory from Alloc.
func Free(p uintptr) { C.free(ptr(p)) }

// Slice views n elements of T at p. Valid until Free(p).
func Slice[T any](p uintptr, n int) []T { return unsafe.Slice((*T)(ptr(p)), n) }

// CallVAdd calls fn as void(const float* a, const float* b, float* c, size_t n, int threads).
func CallVAdd(fn unsafe.Pointer, a, b, c uintptr, n int, threads int) {
	C.hostmem_call_vadd(fn, ptr(a), ptr(b), ptr(c), C.size_t(n), C.int(threads))
}

// ptr turns a C address back into a pointer; p is C memory, outside the Go heap.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
