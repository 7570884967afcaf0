package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

const moduleSource = `#include <hip/hip_runtime.h>
__device__ unsigned counter;
__constant__ float coeffs[4];
extern "C" __global__ void put(unsigned v) { if (threadIdx.x == 0) counter = v; }
extern "C" __global__ void get(unsigned* out) { if (threadIdx.x == 0) out[0] = counter; }
extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = coeffs[i % 4] * x[i];
}`

// The kernels of one source are one module: compiled once and loaded once, whichever
// way they were made, and a __device__ variable one writes is the one another reads.
func TestKernelsOfASourceShareOneModule(t *testing.T) {
	src := moduleSource + "\n// " + t.Name() // compiled by this test, not found in a cache
	d, f := openDevice(t, server.Options{CacheDir: "-"})
	m := server.NewModule(src)
	put, get := m.Kernel("put", server.Block(server.Dim3{X: 32})), server.DefineKernel(src, "get", server.Block(server.Dim3{X: 32}))
	compiles, loads := f.Calls("hiprtcCompileProgram"), f.Calls("hipModuleLoadData")

	out := alloc(t, d.Stream, 4)
	require.NoError(t, d.Call(put, server.Dim3{X: 1}, uint32(41)))
	require.NoError(t, d.Call(get, server.Dim3{X: 1}, out))
	got, err := server.ReadSlice[uint32](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []uint32{41}, got, "get reads the variable put wrote")

	require.NoError(t, server.WriteGlobalSlice(d.Stream, m, "counter", []uint32{7}))
	require.NoError(t, d.Call(get, server.Dim3{X: 1}, out))
	got, err = server.ReadSlice[uint32](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []uint32{7}, got, "the module's variable, written through the module")
	v, err := server.ReadGlobalSlice[uint32](d.Stream, put, "counter")
	require.NoError(t, err)
	assert.Equal(t, []uint32{7}, v, "and read through any of its kernels")

	scale := m.Kernel("scale", server.Block(server.Dim3{X: 4}))
	require.NoError(t, server.WriteGlobalSlice(d.Stream, m, "coeffs", []float32{1, 2, 3, 4}))
	x, y := upload(t, d.Stream, 1, 1, 1, 1, 2, 2, 2, 2), alloc(t, d.Stream, 32)
	require.NoError(t, d.Call(scale, server.Dim3{X: 2}, x, y, 8))
	assert.Equal(t, []float32{1, 2, 3, 4, 2, 4, 6, 8}, readFloats(t, d.Stream, y))

	assert.Equal(t, compiles+1, f.Calls("hiprtcCompileProgram"), "three kernels, one compile")
	assert.Equal(t, loads+1, f.Calls("hipModuleLoadData"), "and one module loaded")
}

// A module is compiled at LoadModule, where its compile error is reported; an entry it
// lacks is an error of that kernel alone, naming the ones it defines, and its other
// kernels run.
func TestModuleLoadAndAMissingKernel(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	broken := server.NewModule(`extern "C" __global__ void k() { not C++ }`)
	err := d.LoadModule(broken)
	require.ErrorIs(t, err, server.ErrCompilation)
	assert.ErrorContains(t, err, "module failed to compile")
	assert.ErrorIs(t, d.LoadModule(nil), server.ErrInvalidArgument)
	var none *server.Module
	assert.ErrorIs(t, d.LoadModule(none), server.ErrInvalidArgument)
	_, err = d.GlobalSize(none, "x")
	assert.ErrorIs(t, err, server.ErrInvalidArgument)

	m := server.NewModule(moduleSource)
	require.NoError(t, d.LoadModule(m))
	err = d.Call(m.Kernel("Get"), server.Dim3{X: 1}, alloc(t, d.Stream, 4))
	require.ErrorIs(t, err, server.ErrCompilation)
	assert.ErrorContains(t, err, "(it defines: put, get, scale)")
	require.NoError(t, d.Call(m.Kernel("put", server.Block(server.Dim3{X: 32})), server.Dim3{X: 1}, uint32(3)))
	v, err := server.ReadGlobalSlice[uint32](d.Stream, m, "counter")
	require.NoError(t, err)
	assert.Equal(t, []uint32{3}, v)
	_, err = d.GlobalSize(m, "nope")
	assert.ErrorContains(t, err, `has no module variable "nope"`)
}

// A module variable as a buffer: a kernel writes it, the buffer reads it; the buffer's
// write is what the next kernel reads; releasing the buffer leaves the variable.
func TestGlobalBufferIsTheVariable(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	m := server.NewModule(moduleSource)
	put, get := m.Kernel("put", server.Block(server.Dim3{X: 32})), m.Kernel("get", server.Block(server.Dim3{X: 32}))
	require.NoError(t, d.Call(put, server.Dim3{X: 1}, uint32(5)))
	b, err := d.GlobalBuffer(m, "counter")
	require.NoError(t, err)
	assert.Equal(t, uint64(4), b.Size())
	got, err := server.ReadSlice[uint32](d.Stream, b)
	require.NoError(t, err)
	assert.Equal(t, []uint32{5}, got)
	require.NoError(t, server.WriteSlice(d.Stream, b, []uint32{9}))
	out := alloc(t, d.Stream, 4)
	require.NoError(t, d.Call(get, server.Dim3{X: 1}, out))
	got, err = server.ReadSlice[uint32](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []uint32{9}, got, "the kernel reads what was written through the buffer")
	require.NoError(t, b.Release())
	v, err := server.ReadGlobalSlice[uint32](d.Stream, m, "counter")
	require.NoError(t, err)
	assert.Equal(t, []uint32{9}, v, "the variable outlives the buffer")
	_, err = d.GlobalBuffer(m, "nope")
	assert.ErrorContains(t, err, `has no module variable "nope"`)
	_, err = d.GlobalBuffer(nil, "counter")
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
}
