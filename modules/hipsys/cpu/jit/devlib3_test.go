package jit_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// __hne, like every half comparison but the u-suffixed ones, is false when a side is NaN
// (CUDA's and HIP's definition); __hneu is true then.
func TestHalfNotEqualIsOrdered(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
extern "C" __global__ void ne(const float* a, const float* b, int* out) {
	const int i = threadIdx.x;
	const __half x = __float2half(a[i]), y = __float2half(b[i]);
	const __hip_bfloat16 u = __float2bfloat16(a[i]), v = __float2bfloat16(b[i]);
	out[4 * i] = __hne(x, y);
	out[4 * i + 1] = __hneu(x, y);
	out[4 * i + 2] = __hne(u, v);
	out[4 * i + 3] = __hneu(u, v);
}
`
	nan := float32(math.NaN())
	as, bs := []float32{1, 1, nan, 2, nan}, []float32{1, 2, 1, nan, nan}
	a, b, out := alloc[float32](t, 5), alloc[float32](t, 5), alloc[int32](t, 20)
	copy(a.s, as)
	copy(b.s, bs)
	var args hipsys.KernelArgs
	args.Ptr(a.dev()).Ptr(b.dev()).Ptr(out.dev())
	launch(t, function(t, load(t, src), "ne"), dim(1, 1, 1), dim(5, 1, 1), 0, &args)
	for i := range as {
		ordered, unordered := int32(0), int32(1)
		if as[i] == as[i] && bs[i] == bs[i] {
			if as[i] != bs[i] {
				ordered = 1
			} else {
				unordered = 0
			}
		}
		assert.Equal(t, []int32{ordered, unordered, ordered, unordered}, out.s[4*i:4*i+4], "%v != %v", as[i], bs[i])
	}
}

// __syncthreads_count, _and and _or, repeated so that each vote's slot is reused, both
// where the module's fibers switch at barriers only and where they also wait at warp
// collectives (a kernel of the module calls __syncwarp).
func TestSyncthreadsVotes(t *testing.T) {
	const votes = `#include <hip/hip_runtime.h>
extern "C" __global__ void votes(const int* in, int* out) {
	const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
	int acc = 0;
	for (int r = 0; r < 4; r++) {
		acc = acc * 1000 + __syncthreads_count(v > r);
		acc = acc * 2 + (__syncthreads_and(v > r) != 0);
		acc = acc * 2 + (__syncthreads_or(v == r) != 0);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
`
	for name, src := range map[string]string{
		"barriers":           votes,
		"barriers and warps": votes + "extern \"C\" __global__ void other(int* p) { __syncwarp(); p[threadIdx.x] = 0; }\n",
	} {
		t.Run(name, func(t *testing.T) {
			const blocks, block = 3, 100
			in, out := alloc[int32](t, blocks*block), alloc[int32](t, blocks*block)
			for i := range in.s {
				in.s[i] = int32(i % 7)
				if i/block == 2 {
					in.s[i] = 9
				}
			}
			var args hipsys.KernelArgs
			args.Ptr(in.dev()).Ptr(out.dev())
			launch(t, function(t, load(t, src), "votes"), dim(blocks, 1, 1), dim(block, 1, 1), 0, &args)
			for b := range blocks {
				want := int32(0)
				for r := range int32(4) {
					count, all, anyv := int32(0), int32(1), int32(0)
					for _, v := range in.s[b*block : (b+1)*block] {
						if v > r {
							count++
						} else {
							all = 0
						}
						if v == r {
							anyv = 1
						}
					}
					want = ((want*1000+count)*2+all)*2 + anyv
				}
				for k := range block {
					assert.Equal(t, want, out.s[b*block+k], "block %d thread %d", b, k)
				}
			}
		})
	}
}

// Clang's __builtin_nontemporal_load and __builtin_nontemporal_store (a cache hint; the
// value is what a plain load reads and a plain store writes), on scalars and a vector
// type, the stored value converted to the pointee's type.
func TestNontemporalBuiltins(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
extern "C" __global__ void stream(const float* in, float* out, const float4* v, float4* w, int* ints, int n) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	const float x = __builtin_nontemporal_load(&in[i]);
	__builtin_nontemporal_store(x * 2.0f + 1.0f, &out[i]);
	float4 q = __builtin_nontemporal_load(&v[i]);
	q.w = q.x + q.y + q.z;
	__builtin_nontemporal_store(q, &w[i]);
	__builtin_nontemporal_store(i * 3, &ints[i]);
}
`
	const n = 100
	in, out := alloc[float32](t, n), alloc[float32](t, n)
	v, w, ints := alloc[float32](t, 4*n), alloc[float32](t, 4*n), alloc[int32](t, n)
	for i := range n {
		in.s[i] = float32(i) / 4
		v.s[4*i], v.s[4*i+1], v.s[4*i+2] = float32(i), 1, -2
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev()).Ptr(v.dev()).Ptr(w.dev()).Ptr(ints.dev()).I32(n)
	launch(t, function(t, load(t, src), "stream"), dim(2, 1, 1), dim(64, 1, 1), 0, &args)
	for i := range n {
		assert.Equal(t, in.s[i]*2+1, out.s[i], "element %d", i)
		assert.Equal(t, []float32{float32(i), 1, -2, float32(i) - 1}, w.s[4*i:4*i+4], "vector %d", i)
		assert.Equal(t, int32(3*i), ints.s[i], "int %d", i)
	}
}
