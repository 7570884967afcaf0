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
