package amd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/amd"
)

// namesSource has kernels only name expressions reach: a template, a C++-linkage kernel
// in a namespace, and overloads.
const namesSource = `#include <hip/hip_runtime.h>
template <typename T, int Scale>
__global__ void scaled(const T* in, T* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = in[i] * T(Scale);
}
namespace ops {
__global__ void negate(int* p) { int i = blockIdx.x * blockDim.x + threadIdx.x; p[i] = -p[i]; }
}
__global__ void fill(int* out, int v) { out[threadIdx.x] = v; }
__global__ void fill(float* out, float v) { out[threadIdx.x] = v; }
__device__ int counter[4];
`

// Name expressions resolve with no GPU (--offload-arch): each lowered name is the mangled
// name of a kernel in the code object, as the cpu device's compiler mangles it too;
// hiprtc's own, and for the casts that pick an overload, which ROCm 5.2's hiprtc does
// not resolve, the platform's (resolveNames). ModuleGetFunction with them awaits a GPU
// (conformance).
func TestNameExpressionsLowerForGfx90a(t *testing.T) {
	p := real(t)
	want := map[string]string{
		"scaled<float, 2>":                       "_Z6scaledIfLi2EEvPKT_PS0_i",
		"ops::negate":                            "_ZN3ops6negateEPi",
		"(void(*)(float*, float))fill":           "_Z4fillPff",
		"static_cast<void(*)(int*, int)>(&fill)": "_Z4fillPii",
		"&counter":                               "counter",
	}
	prog, err := p.RTCCreateProgram(namesSource, "names.hip", nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.RTCDestroyProgram(prog)) }()
	_, err = p.RTCGetLoweredName(prog, "ops::negate")
	assert.ErrorIs(t, err, hipsys.RTCErrorNoLoweredNamesBeforeCompile)
	for e := range want {
		require.NoError(t, p.RTCAddNameExpression(prog, e), e)
	}
	assert.ErrorIs(t, p.RTCAddNameExpression(prog, ""), hipsys.RTCErrorInvalidInput)
	if err := p.RTCCompileProgram(prog, []string{"--offload-arch=gfx90a"}); err != nil {
		log, _ := p.RTCGetProgramLog(prog)
		require.NoError(t, err, log)
	}
	assert.ErrorIs(t, p.RTCAddNameExpression(prog, "scaled<int, 1>"), hipsys.RTCErrorNoNameExpressionsAfterCompile)
	code, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	var lowered []string
	for e, w := range want {
		got, err := p.RTCGetLoweredName(prog, e)
		require.NoError(t, err, e)
		assert.Equal(t, w, got, e)
		if e != "&counter" {
			lowered = append(lowered, got)
		}
	}
	assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", lowered...))
	_, err = p.RTCGetLoweredName(prog, "scaled<int, 1>")
	assert.ErrorIs(t, err, hipsys.RTCErrorNameExpressionNotValid)
}
