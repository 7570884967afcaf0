package amd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
)

// The same sources the cpu and nvidia platforms compile, compiled by the installed
// hiprtc for gfx90a: HIP's macros, NULL, the _sync warp functions, <hip/hip_fp16.h>,
// <type_traits> and cooperative groups, each on its own so a failure names the piece.
func TestHipSourcesCompileForAMD(t *testing.T) {
	supported(t)
	sources := map[string]string{
		"macros": `#include <hip/hip_runtime.h>
extern "C" __global__ void k(int* a) {
	HIP_DYNAMIC_SHARED(int, s)
	s[hipThreadIdx_x] = hipBlockIdx_x * hipBlockDim_x + hipGridDim_x;
	__syncthreads();
	if (a != NULL) a[hipThreadIdx_x] = s[hipBlockDim_x - 1 - hipThreadIdx_x];
}`,
		"sync warp functions": `#include <hip/hip_runtime.h>
extern "C" __global__ void k(float* a, unsigned long long* m) {
	float v = a[threadIdx.x];
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
	v = __shfl_sync(0xffffffffu, v, 0) + __shfl_xor_sync(0xffffffffu, v, 1) + __shfl_up_sync(0xffffffffu, v, 1);
	m[threadIdx.x] = __ballot_sync(0xffffffffu, v > 0) + __any_sync(0xffffffffu, v > 1) + __all_sync(0xffffffffu, v > 2)
		+ __activemask() + __reduce_add_sync(0xffffffffu, (unsigned)v);
	__syncwarp();
	a[threadIdx.x] = v;
}`,
		"match": `#include <hip/hip_runtime.h>
extern "C" __global__ void k(int* a, float* f, unsigned long long* m) {
	int all = 0, allf = 0;
	m[threadIdx.x] = __match_any_sync(0xffffffffu, a[threadIdx.x]) + __match_any_sync(0xffffffffu, f[threadIdx.x])
		+ __match_any_sync(0xffffffffu, m[threadIdx.x]) + __match_all_sync(0xffffffffu, a[threadIdx.x], &all)
		+ __match_all_sync(0xffffffffu, (double)f[threadIdx.x], &allf);
	a[threadIdx.x] = all + allf;
}`,
		"half precision": `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
extern "C" __global__ void k(__half* a, float* f) {
	half h = __hadd(a[0], a[1]);
	half2 h2 = __floats2half2_rn(1.0f, 2.0f);
	f[threadIdx.x] = __half2float(h) + __low2float(h2);
}`,
		"type traits": `#include <hip/hip_runtime.h>
#include <type_traits>
template <class T> __device__ std::enable_if_t<std::is_floating_point<T>::value, T> twice(T v) { return v + v; }
extern "C" __global__ void k(float* a) {
	static_assert(std::is_same<std::remove_cv_t<const float>, float>::value, "traits");
	a[threadIdx.x] = twice(a[threadIdx.x]);
}`,
		"grid constant and nontemporal builtins": `#include <hip/hip_runtime.h>
struct P { float scale; int n; };
extern "C" __global__ void k(const __grid_constant__ P p, float* a) {
	const P* q = &p;
	const float v = __builtin_nontemporal_load(&a[threadIdx.x]);
	__builtin_nontemporal_store(v * q->scale, &a[threadIdx.x]);
}`,
		"cooperative groups": `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(int* a) {
	cg::thread_block b = cg::this_thread_block();
	cg::thread_block_tile<16> tile = cg::tiled_partition<16>(b);
	int v = a[b.thread_rank()];
	b.sync();
	v = cg::reduce(tile, v, cg::plus<int>()) + tile.shfl_down(v, 1);
	a[b.thread_rank()] = v + (int)tile.ballot(v > 0);
}`,
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			code, log, err := amd.CompileFor("gfx90a", src, "compat.hip", nil)
			require.NoError(t, err, "log:\n%s", log)
			assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", "k"))
		})
	}
}

// Every corpus kernel (the sources the cpu platform runs and the H200 runs) compiles for
// gfx90a with the installed hiprtc, with each entry in the code object.
func TestCorpusCompilesForGfx90a(t *testing.T) {
	supported(t)
	corpus := conformance.Corpus()
	require.NotEmpty(t, corpus)
	for _, k := range corpus {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			code, log, err := amd.CompileFor("gfx90a", k.Source, k.Name+".hip", conformance.CorpusOptions)
			require.NoError(t, err, "log:\n%s", log)
			require.NotEmpty(t, k.Entries)
			assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", k.Entries...))
		})
	}
}

// A kernel launch in device code (dynamic parallelism, which HIP does not have) is
// refused before hiprtc runs, with the same log as on every platform.
func TestDynamicParallelismRefusedForAMD(t *testing.T) {
	supported(t)
	const src = `#include <hip/hip_runtime.h>
__global__ void child(int* p) { p[threadIdx.x] = 0; }
extern "C" __global__ void parent(int* p) { child<<<1, 64>>>(p); }
`
	_, log, err := amd.CompileFor("gfx90a", src, "dp.hip", nil)
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, hipsys.RTCErrorCompilation, he.RTCStatus)
	assert.Contains(t, log, "dp.hip:3: error: a launch of kernel 'child' (<<<...>>>) in device code: dynamic parallelism")
}
