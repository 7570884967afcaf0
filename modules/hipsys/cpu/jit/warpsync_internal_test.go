package jit

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys/conformance"
)

// The reductions' shared-memory prefix every case below shares.
const warpSyncPrefix = `#include <hip/hip_runtime.h>
extern "C" __global__ void reduce(const float* in, float* out) {
	__shared__ float sdata[256];
	const unsigned tid = threadIdx.x;
	sdata[tid] = in[blockIdx.x * 256 + tid];
	__syncthreads();
	for (unsigned s = 128; s > 32; s >>= 1) {
		if (tid < s) sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
`

func TestWarpSynchronousRefused(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"unrolled warp reduction in a helper": {`#include <hip/hip_runtime.h>
__device__ void warpReduce(volatile float* sdata, unsigned tid) {
	sdata[tid] += sdata[tid + 32];
	sdata[tid] += sdata[tid + 16];
	sdata[tid] += sdata[tid + 8];
}
` + warpSyncPrefix[len("#include <hip/hip_runtime.h>\n"):] + `	if (tid < 32) warpReduce(sdata, tid);
	if (tid == 0) out[blockIdx.x] = sdata[0];
}
`, "k.hip:3: error: implicit warp-synchronous code: sdata[tid+32] reads shared memory that another thread writes as sdata[tid] at line 4"},
		"volatile alias in the kernel": {warpSyncPrefix + `	if (tid < 32) {
		volatile float* v = sdata;
		v[tid] = v[tid] + v[tid + 32];
		v[tid] = v[tid] + v[tid + 16];
	}
	if (tid == 0) out[blockIdx.x] = sdata[0];
}
`, "k.hip:13: error: implicit warp-synchronous code: v[tid+32] reads shared memory that another thread writes as v[tid] at line 14"},
		"a loop with no barrier": {warpSyncPrefix + `	if (tid < 32)
		for (int o = 32; o > 0; o >>= 1) sdata[tid] += sdata[tid + o];
	if (tid == 0) out[blockIdx.x] = sdata[0];
}
`, "k.hip:12: error: implicit warp-synchronous code: sdata[tid+o]"},
		"a template helper, as in CUDA's reduction sample": {`#include <hip/hip_runtime.h>
template <unsigned int blockSize>
__device__ void warpReduce(volatile int* sdata, unsigned int tid) {
	if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
	if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
}
extern "C" __global__ void reduce(int* d) {
	__shared__ int sdata[128];
	sdata[threadIdx.x] = d[threadIdx.x];
	__syncthreads();
	if (threadIdx.x < 32) warpReduce<128>(sdata, threadIdx.x);
}
`, "k.hip:4: error: implicit warp-synchronous code: sdata[tid+32]"},
		"a running sum through a volatile alias": {warpSyncPrefix + `	float mySum = sdata[tid];
	if (tid < 32) {
		volatile float* smem = sdata;
		smem[tid] = mySum = mySum + smem[tid + 32];
		smem[tid] = mySum = mySum + smem[tid + 16];
	}
}
`, "k.hip:14: error: implicit warp-synchronous code: smem[tid+32]"},
		"a warp scan": {`#include <hip/hip_runtime.h>
extern "C" __global__ void scan(int* data) {
	__shared__ int s[64];
	const int lane = threadIdx.x & 31, i = threadIdx.x;
	s[i] = data[i];
	__syncthreads();
	if (lane >= 1) s[i] = s[i - 1] + s[i];
	if (lane >= 2) s[i] = s[i - 2] + s[i];
	data[i] = s[i];
}
`, "k.hip:7: error: implicit warp-synchronous code: s[i-1]"},
		"a transpose within a warp": {`#include <hip/hip_runtime.h>
extern "C" __global__ void flip(const int* in, int* out) {
	extern __shared__ int tile[];
	tile[threadIdx.x] = in[threadIdx.x];
	out[threadIdx.x] = tile[31 - threadIdx.x];
}
`, "k.hip:5: error: implicit warp-synchronous code: tile[31-threadIdx.x]"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, warpSynchronous(tc.src, "k.hip", nil), tc.want)
		})
	}
}

func TestWarpSynchronousAccepted(t *testing.T) {
	for name, src := range map[string]string{
		"barriers only": warpSyncPrefix + `	for (unsigned s = 32; s > 0; s >>= 1) {
		if (tid < s) sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0) out[blockIdx.x] = sdata[0];
}
`,
		"__syncwarp between the steps": warpSyncPrefix + `	if (tid < 32) {
		volatile float* v = sdata;
		float x = v[tid + 32];
		__syncwarp();
		v[tid] += x;
		__syncwarp();
		x = v[tid + 16];
		__syncwarp();
		v[tid] += x;
		__syncwarp();
	}
	if (tid == 0) out[blockIdx.x] = sdata[0];
}
`,
		"shuffles for the last warp": warpSyncPrefix + `	float v = tid < 32 ? sdata[tid] + sdata[tid + 32] : 0.0f;
	for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);
	if (tid == 0) out[blockIdx.x] = v;
}
`,
		"a tile's sync": `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(int* data) {
	__shared__ int s[64];
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
	const int i = threadIdx.x;
	s[i] = data[i];
	tile.sync();
	data[i] = s[i ^ 1];
}
`,
		"a scan through a temporary": `#include <hip/hip_runtime.h>
extern "C" __global__ void scan(int* data) {
	__shared__ int s[256];
	const int i = threadIdx.x;
	s[i] = data[i];
	__syncthreads();
	for (int d = 1; d < 256; d *= 2) {
		const int v = i >= d ? s[i - d] : 0;
		__syncthreads();
		s[i] += v;
		__syncthreads();
	}
	data[i] = s[i];
}
`,
		"one thread's serial work": `#include <hip/hip_runtime.h>
extern "C" __global__ void serial(int* data, int n) {
	__shared__ int s[256];
	s[threadIdx.x] = data[threadIdx.x];
	__syncthreads();
	if (threadIdx.x == 0)
		for (int k = 1; k < n; k++) s[k] += s[k - 1];
	__syncthreads();
	data[threadIdx.x] = s[threadIdx.x];
}
`,
		"a thread's own slots": `#include <hip/hip_runtime.h>
extern "C" __global__ void own(int* data) {
	__shared__ int s[512];
	const int t = threadIdx.x, b = 2 * t;
	s[b] = data[t];
	s[b + 1] = -data[t];
	s[b] *= 2;
	data[t] = s[b] + s[b + 1];
	atomicAdd(&s[t ^ 1], 1);
}
`,
		"tiles between barriers": `#include <hip/hip_runtime.h>
extern "C" __global__ void mm(const float* a, const float* b, float* c, int n) {
	__shared__ float as[16][16], bs[16][16];
	const int tx = threadIdx.x, ty = threadIdx.y;
	float sum = 0;
	for (int t = 0; t < n / 16; t++) {
		as[ty][tx] = a[ty * n + t * 16 + tx];
		bs[ty][tx] = b[(t * 16 + ty) * n + tx];
		__syncthreads();
		for (int k = 0; k < 16; k++) sum += as[ty][k] * bs[k][tx];
		__syncthreads();
	}
	c[ty * n + tx] = sum;
}
`,
		"branches a block takes whole": `#include <hip/hip_runtime.h>
extern "C" __global__ void branches(int* d) {
	extern __shared__ int s[];
	const int t = threadIdx.x;
	s[t] = d[t];
	__syncthreads();
	if (blockIdx.x % 2 == 0) {
		int v = s[blockDim.x - 1 - t];
		__syncthreads();
		s[t] = v;
	} else {
		for (int step = 1; step < 4; step++) {
			int v = s[(t + step) % blockDim.x];
			__syncthreads();
			s[t] += v;
			__syncthreads();
		}
	}
	__syncthreads();
	d[t] = s[t];
}
`,
		"a disabled block": `#include <hip/hip_runtime.h>
extern "C" __global__ void k(int* d) {
	__shared__ int s[64];
#if 0
	s[threadIdx.x] = 1;
	d[0] = s[threadIdx.x + 1];
#endif
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			live := map[int]bool(nil)
			if name == "a disabled block" {
				live = map[int]bool{1: true, 2: true, 3: true, 4: false, 5: false, 6: false, 7: false, 8: true}
			}
			assert.Empty(t, warpSynchronous(src, "k.hip", live))
		})
	}
	// The conformance suite's sources, correct on every platform, none refused.
	for _, k := range append(conformance.Kernels(), conformance.Corpus()...) {
		assert.Empty(t, warpSynchronous(k.Source, k.Name+".hip", nil), k.Name)
	}
}
