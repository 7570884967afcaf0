package compute

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDefinedKernels(t *testing.T) {
	src := `#include <hip/hip_runtime.h>
// __global__ void commented(int) {}
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {}
extern "C" __global__ void __launch_bounds__(256) bounded(float* y) {}
template <typename T> __global__ void reduce(const T* in, T* out) {}
__global__ __attribute__((noinline)) void attributed() {}
__device__ float helper(float x) { return x; }
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y);`
	assert.Equal(t, []string{"saxpy", "bounded", "reduce", "attributed"}, definedKernels(src))
	assert.Empty(t, definedKernels(`__device__ int f() { return 1; }`))
	assert.Equal(t,
		`the source has no kernel named "Saxpy" (it defines: saxpy, bounded, reduce, attributed): an entry point is an extern "C" __global__ function of that name, or a C++ one the module resolves as a name expression`,
		missingEntryLog("Saxpy", src))
	assert.Contains(t, missingEntryLog("k", "int x;"), "(it declares no __global__ function)")
	assert.Contains(t, missingEntryLog("saxpy", src), `no entry point "saxpy" though the source seems to declare one`,
		"never a list that names the kernel asked for")
}
