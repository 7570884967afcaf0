package jit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Loop entries whose index is the global one plus a constant (the thread loop then counts
// over that index, cubehip_entry.h's Off): every thread runs once with its own threadIdx,
// whatever the offset's sign, the block's shape and a partial last block.
const offsetKernels = `
extern "C" __global__ void plus1(const float* in, float* out, int n) {
	int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int y = blockIdx.y + 1;
	if (x < n - 1) out[y * n + x] = 0.25f * (in[y * n + x - 1] + in[y * n + x + 1] + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}
extern "C" __global__ void minus3(const float* in, float* out, int n) {
	const int i = threadIdx.x + blockIdx.x * blockDim.x - 3;
	if (i >= 0 && i < n) out[i] = in[i] * 2.0f + (float)threadIdx.x;
}
extern "C" __global__ void plus2d(const float* in, float* out, int n) {
	int x = blockIdx.x * blockDim.x + threadIdx.x + 2, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < n && y < n) out[y * n + x] = in[y * n + x] + (float)(threadIdx.y * 100 + threadIdx.x);
}
`

func TestIndexOffsetKernels(t *testing.T) {
	m := load(t, offsetKernels)
	const n = 70
	in := alloc[float32](t, n*n)
	for i := range in.s {
		in.s[i] = float32((i*7919)%101) / 8
	}
	for _, bx := range []uint32{1, 7, 32, 256} {
		t.Run(fmt.Sprintf("plus1/%d", bx), func(t *testing.T) {
			out := alloc[float32](t, n*n)
			clear(out.s)
			var args hipsys.KernelArgs
			args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
			launch(t, function(t, m, "plus1"), dim((n-2+bx-1)/bx, n-2, 1), dim(bx, 1, 1), 0, &args)
			for y := range n {
				for x := range n {
					want := float32(0)
					if y > 0 && y < n-1 && x > 0 && x < n-1 {
						want = 0.25 * (in.s[y*n+x-1] + in.s[y*n+x+1] + in.s[(y-1)*n+x] + in.s[(y+1)*n+x])
					}
					require.Equal(t, want, out.s[y*n+x], "x=%d y=%d", x, y)
				}
			}
		})
	}
	for _, bx := range []uint32{5, 16} {
		t.Run(fmt.Sprintf("minus3/%d", bx), func(t *testing.T) {
			out := alloc[float32](t, n)
			clear(out.s)
			var args hipsys.KernelArgs
			args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
			launch(t, function(t, m, "minus3"), dim((n+3+bx-1)/bx, 1, 1), dim(bx, 1, 1), 0, &args)
			for i := range n {
				require.Equal(t, in.s[i]*2+float32(uint32(i+3)%bx), out.s[i], "i=%d", i)
			}
		})
	}
	for _, b := range []hipsys.Dim3{dim(8, 4, 1), dim(3, 5, 2)} {
		t.Run(fmt.Sprintf("plus2d/%dx%dx%d", b.X, b.Y, b.Z), func(t *testing.T) {
			out := alloc[float32](t, n*n)
			clear(out.s)
			var args hipsys.KernelArgs
			args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
			// With z = 2, both layers of a block write the same elements, the same values.
			launch(t, function(t, m, "plus2d"), dim((n-2+b.X-1)/b.X, (n+b.Y-1)/b.Y, 1), b, 0, &args)
			for y := range n {
				for x := range n {
					want := float32(0)
					if x >= 2 {
						want = in.s[y*n+x] + float32(uint32(y)%b.Y*100+uint32(x-2)%b.X)
					}
					require.Equal(t, want, out.s[y*n+x], "x=%d y=%d", x, y)
				}
			}
		})
	}
}
