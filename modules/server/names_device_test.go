package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

const cppKernels = `#include <hip/hip_runtime.h>
template <typename T, int N>
__global__ void fill(T* out, T v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = v + (T)i;
}
__global__ void scale(float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
__global__ void twice(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2; }
__global__ void twice(int* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2; }
`

// C++ kernels by name: a template's specialization, a C++-linkage kernel and an
// overload told apart by a cast, each launched as an extern "C" kernel is, its
// arguments checked.
func TestCppKernelsByName(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	block := server.Block(server.Dim3{X: 4})

	fillF := server.DefineKernel(cppKernels, "fill<float, 4>", block)
	out := alloc32(t, d)
	require.NoError(t, d.Call(fillF, server.Dim3{X: 1}, out, float32(10)))
	assert.Equal(t, []float32{10, 11, 12, 13}, readFloats(t, d.Stream, out))

	scale := server.DefineKernel(cppKernels, "scale", block)
	require.NoError(t, d.Call(scale, server.Dim3{X: 1}, out, 0.5, 4))
	assert.Equal(t, []float32{5, 5.5, 6, 6.5}, readFloats(t, d.Stream, out))
	assert.ErrorIs(t, d.Call(scale, server.Dim3{X: 1}, out, out, 4), server.ErrInvalidArgument, "arguments are checked")

	m := server.NewModuleWithNames(cppKernels, []string{"(void(*)(int*, int))twice", "(void(*)(float*, int))twice", "fill<int, 4>"})
	ints := allocT[int32](t, d)
	require.NoError(t, d.Call(m.Kernel("fill<int, 4>", block), server.Dim3{X: 1}, ints, int32(1)))
	require.NoError(t, d.Call(m.Kernel("(void(*)(int*, int))twice", block), server.Dim3{X: 1}, ints, 4))
	got, err := server.ReadSlice[int32](d.Stream, ints)
	require.NoError(t, err)
	assert.Equal(t, []int32{2, 4, 6, 8}, got)
	require.NoError(t, d.Call(m.Kernel("(void(*)(float*, int))twice", block), server.Dim3{X: 1}, out, 4))
	assert.Equal(t, []float32{10, 11, 12, 13}, readFloats(t, d.Stream, out))

	err = d.Call(m.Kernel("scale", block), server.Dim3{X: 1}, out, 0.5, 4)
	assert.ErrorIs(t, err, server.ErrCompilation, "not among the module's name expressions")
	assert.ErrorContains(t, err, "name expression")
}

// A module with name expressions is served by the disk cache with its symbols: a second
// device over the same cache launches the template's specialization without compiling.
func TestCppKernelNamesFromTheDiskCache(t *testing.T) {
	dir := t.TempDir()
	src := cppKernels + "// " + t.Name() + "\n"
	for i, compiles := range []int{1, 0} {
		d, f := openDevice(t, server.Options{CacheDir: dir})
		fill := server.DefineKernel(src, "fill<float, 4>", server.Block(server.Dim3{X: 4}))
		before := f.Calls("hiprtcCompileProgram")
		out := alloc32(t, d)
		require.NoError(t, d.Call(fill, server.Dim3{X: 1}, out, float32(1)), "device %d", i)
		assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, out))
		assert.Equal(t, compiles, f.Calls("hiprtcCompileProgram")-before, "device %d", i)
	}
}
