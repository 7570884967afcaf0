package hipsys_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestDeviceLaunchLog(t *testing.T) {
	const parent = `__global__ void child(int* p) { p[threadIdx.x] = 1; }
extern "C" __global__ void parent(int* p) {
	if (threadIdx.x == 0)
		child<<<1, 32>>>(p);
}
`
	log := hipsys.DeviceLaunchLog(parent, "dp.hip", nil)
	assert.Contains(t, log, "dp.hip:4: error: a launch of kernel 'child' (<<<...>>>) in device code")
	assert.Contains(t, log, "dynamic parallelism")

	for name, src := range map[string]string{
		"shifts":            `extern "C" __global__ void k(int* p) { p[0] = p[1] << 2; p[2] = (p[3] >> 1) > 0; }`,
		"in a comment":      "// k<<<1, 1>>>();\n/* k<<<1, 1>>>(); */\nextern \"C\" __global__ void k() {}",
		"in a string":       `extern "C" __global__ void k() { printf("k<<<1, 1>>>()\n"); printf(R"x(<<<)x" ">>>"); }`,
		"operator<<<":       "template <class T> struct S; template <class T> void operator<<(S<T>&, int);\nstruct F { friend void operator<<<int>(S<int>&, int); };",
		"nested templates":  `template <class T> struct A {}; A<A<A<int>>> a; extern "C" __global__ void k() {}`,
		"digit separators":  `extern "C" __global__ void k(int* p) { p[0] = 1'000; p[1] = '<'; }`,
		"opening, no close": `extern "C" __global__ void k(int* p) { /* nothing */ } // <<<`,
	} {
		assert.Empty(t, hipsys.DeviceLaunchLog(src, "k.hip", nil), name)
	}

	macro := "#define LAUNCH(k) k<<<1, 1>>>()\n"
	assert.Contains(t, hipsys.DeviceLaunchLog(`#include "launch.h"`, "k.hip", []hipsys.Header{{Name: "launch.h", Source: macro}}),
		"launch.h:1: error: a launch of kernel 'k'", "a launch in an in-memory header, through a macro")
}
