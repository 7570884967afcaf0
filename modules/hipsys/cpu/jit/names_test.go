package jit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// namesSource has what name expressions reach and extern "C" cannot: a template kernel
// (instantiated by its expression, and explicitly), C++-linkage kernels, overloads, a
// kernel in a namespace, a template with barriers and dynamic shared memory (a block
// reduction, run as regions), one whose warp shuffle sits in a helper (run as fibers),
// overloads of which one runs as fibers, and a __device__ variable.
const namesSource = `#include <hip/hip_runtime.h>
template <typename T, int Scale>
__global__ void scaled(const T* in, T* out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = in[i] * T(Scale);
}
template __global__ void scaled<int, 3>(const int*, int*, int);

__global__ void fill(int* out, int v) { out[blockIdx.x * blockDim.x + threadIdx.x] = v; }
__global__ void fill(float* out, float v) { out[blockIdx.x * blockDim.x + threadIdx.x] = v + 0.5f; }

namespace ops {
__global__ void negate(int* p) { int i = blockIdx.x * blockDim.x + threadIdx.x; p[i] = -p[i]; }
}

template <typename T>
__global__ void block_sum(const T* in, T* out) {
	extern __shared__ unsigned char raw[];
	T* s = reinterpret_cast<T*>(raw);
	s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
	__syncthreads();
	for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
		if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

__device__ int warp_total(int v) {
	for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o, 32);
	return v;
}
template <int Add>
__global__ void warp_sums(const int* in, int* out) {
	int v = warp_total(in[threadIdx.x] + Add);
	if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}

// Overloads of one name that would run two ways (a vote needs fibers): both run as fibers.
__global__ void votes(int* out) {
	unsigned long long b = __ballot(threadIdx.x % 2);
	if (threadIdx.x == 0) out[blockIdx.x] = __popcll(b);
}
__global__ void votes(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1.5f; }

// An explicit specialization is a body of its own, wrapped as the primary's.
template <typename T> __global__ void tag(T* p) { p[threadIdx.x] = T(1); }
template <> __global__ void tag<int>(int* p) { p[threadIdx.x] = 42; }

__device__ int counter[4];
extern "C" __global__ void plain(int* p) { p[threadIdx.x] = 7; }
`

var namesExprs = []string{
	"scaled<float, 2>", "scaled<int, 3>", "(void(*)(int*, int))fill", "static_cast<void(*)(float*, float)>(&fill)",
	"ops::negate", "block_sum<double>", "warp_sums<1>", "&counter", "plain",
	"(void(*)(int*))votes", "(void(*)(float*))votes", "tag<int>", "tag<float>",
}

func compileNamed(t *testing.T, src string, exprs []string) (*jit.Module, map[string]string) {
	t.Helper()
	img, log, err := compiler().CompileNamed(src, "names.hip", nil, []string{"-O2"}, exprs)
	require.NoError(t, err, log)
	names, err := jit.LoweredNames(img)
	require.NoError(t, err)
	m, err := jit.Load(img)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m, names
}

func TestNameExpressionsResolveAndLaunch(t *testing.T) {
	m, names := compileNamed(t, namesSource, namesExprs)
	assert.Equal(t, map[string]string{
		"scaled<float, 2>":                           "_Z6scaledIfLi2EEvPKT_PS0_i",
		"scaled<int, 3>":                             "_Z6scaledIiLi3EEvPKT_PS0_i",
		"(void(*)(int*, int))fill":                   "_Z4fillPii",
		"static_cast<void(*)(float*, float)>(&fill)": "_Z4fillPff",
		"ops::negate":                                "_ZN3ops6negateEPi",
		"block_sum<double>":                          "_Z9block_sumIdEvPKT_PS0_",
		"warp_sums<1>":                               "_Z9warp_sumsILi1EEvPKiPi",
		"&counter":                                   "counter",
		"plain":                                      "plain",
		"(void(*)(int*))votes":                       "_Z5votesPi",
		"(void(*)(float*))votes":                     "_Z5votesPf",
		"tag<int>":                                   "_Z3tagIiEvPT_",
		"tag<float>":                                 "_Z3tagIfEvPT_",
	}, names)

	const n = 256
	block := dim(64, 1, 1)
	grid := dim(n/64, 1, 1)

	fin, fout := alloc[float32](t, n), alloc[float32](t, n)
	for i := range fin.s {
		fin.s[i] = float32(i)
	}
	launch(t, function(t, m, names["scaled<float, 2>"]), grid, block, 0, new(hipsys.KernelArgs).Ptr(fin.dev()).Ptr(fout.dev()).I32(n))
	for i, v := range fout.s {
		require.Equal(t, float32(2*i), v, "scaled<float, 2> at %d", i)
	}

	iin, iout := alloc[int32](t, n), alloc[int32](t, n)
	for i := range iin.s {
		iin.s[i] = int32(i)
	}
	launch(t, function(t, m, names["scaled<int, 3>"]), grid, block, 0, new(hipsys.KernelArgs).Ptr(iin.dev()).Ptr(iout.dev()).I32(n))
	for i, v := range iout.s {
		require.Equal(t, int32(3*i), v, "scaled<int, 3> at %d", i)
	}

	launch(t, function(t, m, names["(void(*)(int*, int))fill"]), grid, block, 0, new(hipsys.KernelArgs).Ptr(iout.dev()).I32(5))
	launch(t, function(t, m, names["static_cast<void(*)(float*, float)>(&fill)"]), grid, block, 0, new(hipsys.KernelArgs).Ptr(fout.dev()).F32(5))
	for i := range n {
		require.Equal(t, int32(5), iout.s[i], "fill(int*) at %d", i)
		require.Equal(t, float32(5.5), fout.s[i], "fill(float*) at %d", i)
	}

	launch(t, function(t, m, names["ops::negate"]), grid, block, 0, new(hipsys.KernelArgs).Ptr(iout.dev()))
	assert.Equal(t, int32(-5), iout.s[n-1])

	din, dout := alloc[float64](t, n), alloc[float64](t, n/64)
	for i := range din.s {
		din.s[i] = float64(i)
	}
	launch(t, function(t, m, names["block_sum<double>"]), grid, block, 64*8, new(hipsys.KernelArgs).Ptr(din.dev()).Ptr(dout.dev()))
	for b, v := range dout.s {
		want := 0.0
		for i := b * 64; i < (b+1)*64; i++ {
			want += float64(i)
		}
		require.Equal(t, want, v, "block_sum<double> of block %d", b)
	}

	win, wout := alloc[int32](t, 64), alloc[int32](t, 2)
	for i := range win.s {
		win.s[i] = int32(i)
	}
	launch(t, function(t, m, names["warp_sums<1>"]), dim(1, 1, 1), dim(64, 1, 1), 0, new(hipsys.KernelArgs).Ptr(win.dev()).Ptr(wout.dev()))
	assert.Equal(t, []int32{32 + 31*32/2, 32 + (32+63)*32/2}, wout.s)

	launch(t, function(t, m, names["(void(*)(int*))votes"]), dim(2, 1, 1), dim(32, 1, 1), 0, new(hipsys.KernelArgs).Ptr(iout.dev()))
	assert.Equal(t, []int32{16, 16}, iout.s[:2])
	launch(t, function(t, m, names["(void(*)(float*))votes"]), dim(2, 1, 1), dim(32, 1, 1), 0, new(hipsys.KernelArgs).Ptr(fout.dev()))
	for i := range 64 {
		require.Equal(t, float32(1.5), fout.s[i], "votes(float*) at %d", i)
	}

	launch(t, function(t, m, names["tag<int>"]), dim(1, 1, 1), dim(8, 1, 1), 0, new(hipsys.KernelArgs).Ptr(iout.dev()))
	launch(t, function(t, m, names["tag<float>"]), dim(1, 1, 1), dim(8, 1, 1), 0, new(hipsys.KernelArgs).Ptr(fout.dev()))
	for i := range 8 {
		require.Equal(t, int32(42), iout.s[i], "tag<int> at %d", i)
		require.Equal(t, float32(1), fout.s[i], "tag<float> at %d", i)
	}

	launch(t, function(t, m, "plain"), dim(1, 1, 1), dim(4, 1, 1), 0, new(hipsys.KernelArgs).Ptr(iout.dev()))
	assert.Equal(t, int32(7), iout.s[3])

	// The kernels' parameters are their compiled signatures, as for extern "C" entries.
	f := function(t, m, names["scaled<float, 2>"])
	assert.Equal(t, []hipsys.KernelParam{{Offset: 0, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 8, Size: 8, Kind: hipsys.ParamPointer}, {Offset: 16, Size: 4, Kind: hipsys.ParamValue}}, f.Params())

	// The variable is a global of the module by its lowered name; no kernel.
	g, err := m.Global(names["&counter"])
	require.NoError(t, err)
	assert.Equal(t, uint64(16), g.Size)
	_, err = m.Function(names["&counter"])
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	assert.ErrorContains(t, err, "no __global__ definition")

	// A C++ kernel no expression named is no entry, by any name.
	_, err = m.Function("_Z6scaledIfLi4EEvPKT_PS0_i")
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	_, err = m.Function("fill")
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
}

// An expression that designates nothing, or an overload set without a cast, fails the
// compile with the compiler's words, quoting the expression.
func TestNameExpressionErrors(t *testing.T) {
	for _, tc := range []struct{ expr, says string }{
		{"fill", "name expression 'fill'"},
		{"missing<int>", "name expression 'missing<int>'"},
	} {
		_, log, err := compiler().CompileNamed(namesSource, "names.hip", nil, nil, []string{tc.expr})
		require.Error(t, err, tc.expr)
		assert.ErrorIs(t, err, hipsys.RTCErrorCompilation)
		assert.Contains(t, log, tc.says)
	}
	_, _, err := compiler().CompileNamed(namesSource, "names.hip", nil, nil, []string{" "})
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidInput)
}

// Name expressions are part of the cache key: the same source with other expressions is
// another object, and one without any is the object it always was.
func TestNameExpressionsAreKeyed(t *testing.T) {
	const src = "template <int N> __global__ void k(int* p) { p[threadIdx.x] = N; }\n"
	a, log, err := compiler().CompileNamed(src, "k.hip", nil, nil, []string{"k<1>"})
	require.NoError(t, err, log)
	b, log, err := compiler().CompileNamed(src, "k.hip", nil, nil, []string{"k<2>"})
	require.NoError(t, err, log)
	na, err := jit.LoweredNames(a)
	require.NoError(t, err)
	nb, err := jit.LoweredNames(b)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k<1>": "_Z1kILi1EEvPi"}, na)
	assert.Equal(t, map[string]string{"k<2>": "_Z1kILi2EEvPi"}, nb)
	c, log, err := compiler().Compile(src, "k.hip", nil, nil)
	require.NoError(t, err, log)
	nc, err := jit.LoweredNames(c)
	require.NoError(t, err)
	assert.Empty(t, nc)
}

// A kernel the source exports (default visibility, against the jit's hidden default) is
// pointed at through a relocation against its symbol rather than a relative one: the
// same lowered name either way.
func TestNameExpressionsOfAnExportedKernel(t *testing.T) {
	const src = "template <int N> __attribute__((visibility(\"default\"))) __global__ void k(int* p) { p[threadIdx.x] = N; }\n"
	m, names := compileNamed(t, src, []string{"k<5>"})
	assert.Equal(t, map[string]string{"k<5>": "_Z1kILi5EEvPi"}, names)
	out := alloc[int32](t, 4)
	launch(t, function(t, m, names["k<5>"]), dim(1, 1, 1), dim(4, 1, 1), 0, new(hipsys.KernelArgs).Ptr(out.dev()))
	assert.Equal(t, []int32{5, 5, 5, 5}, out.s)
}
