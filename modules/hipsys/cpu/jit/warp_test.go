package jit_test

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

const warpSource = `#include <hip/hip_runtime.h>
// A block sum as real code writes it: shuffles within each warp, one partial per warp in
// shared memory, then the first warp reduces the partials.
__device__ float warp_sum(float v) {
	for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
	return v;
}
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
	__shared__ float partial[1024 / 32];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = i < n ? in[i] : 0.0f;
	v = warp_sum(v);
	int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
	if (lane == 0) partial[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < (int)(blockDim.x / warpSize) ? partial[lane] : 0.0f;
		v = warp_sum(v);
		if (lane == 0) out[blockIdx.x] = v;
	}
}
// Every lane records what each warp function gives it.
extern "C" __global__ void lanes(const int* in, long long* out) {
	const int t = threadIdx.x, lane = t % warpSize;
	const int v = in[t];
	long long* o = out + t * 12;
	o[0] = __shfl(v, 3);
	o[1] = __shfl_up(v, 1);
	o[2] = __shfl_down(v, 2);
	o[3] = __shfl_xor(v, 5);
	o[4] = __shfl_sync(0xffffffffu, v, lane + 1, 8);
	o[5] = (long long)__ballot(v & 1);
	o[6] = __any(v == 7) + 2 * __all(v >= 0);
	o[7] = __shfl_down_sync(0xffffffffffffffffull, (double)v, 1) * 2;
	o[8] = __lane_id();
	o[9] = __reduce_add_sync(0xffffffffu, (unsigned)v);
	o[10] = (long long)__match_any_sync(0xffffffffu, v % 3);
	if (t % 2) return;  // odd lanes leave: the rest go on without them
	o[11] = (long long)__activemask();
}
// An inclusive scan within each warp (Hillis-Steele with __shfl_up).
extern "C" __global__ void warp_scan(const int* in, int* out) {
	int v = in[blockIdx.x * blockDim.x + threadIdx.x];
	const int lane = threadIdx.x % warpSize;
	for (int d = 1; d < warpSize; d *= 2) {
		int u = __shfl_up_sync(0xffffffffu, v, d);
		if (lane >= d) v += u;
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
`

func TestWarpBlockSum(t *testing.T) {
	f := function(t, load(t, warpSource), "block_sum")
	const block, blocks = 256, 40
	const n = block*blocks - 77
	in, out := alloc[float32](t, n), alloc[float32](t, blocks)
	want := make([]float32, blocks)
	for i := range n {
		in.s[i] = float32(i%13) - 5
		want[i/block] += in.s[i]
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev()).I32(n)
	launch(t, f, dim(blocks, 1, 1), dim(block, 1, 1), 0, &args)
	assert.Equal(t, want, out.s)
}

func TestWarpLaneSemantics(t *testing.T) {
	f := function(t, load(t, warpSource), "lanes")
	const n = 96 // three warps of 32, or one and a half of 64
	W := jit.WarpSize
	in, out := alloc[int32](t, n), alloc[int64](t, n*12)
	for i := range n {
		in.s[i] = int32((i * 37) % 11)
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev())
	launch(t, f, dim(1, 1, 1), dim(n, 1, 1), 0, &args)
	for tid := range n {
		lane, base := tid%W, tid-tid%W
		size := min(W, n-base) // the last warp may be partial
		v := int64(in.s[tid])
		at := func(l int) int64 {
			if l < 0 || l >= size {
				return v
			}
			return int64(in.s[base+l])
		}
		var ballot, match, sum int64
		anySeven, all := int64(0), int64(2)
		for l := range size {
			x := in.s[base+l]
			if x&1 == 1 {
				ballot |= 1 << l
			}
			if x == 7 {
				anySeven = 1
			}
			if x%3 == in.s[tid]%3 {
				match |= 1 << l
			}
			sum += int64(x)
		}
		up := v
		if lane >= 1 {
			up = at(lane - 1)
		}
		down2 := v
		if lane+2 < W {
			down2 = at(lane + 2)
		}
		down1 := v
		if lane+1 < W {
			down1 = at(lane + 1)
		}
		seg := lane &^ 7
		want := []int64{
			at(3), up, down2, at(lane ^ 5), at(seg + (lane+1)&7), ballot, anySeven + all, down1 * 2,
			int64(lane), int64(uint32(sum)), match,
		}
		if tid%2 == 0 {
			var evens int64
			for l := 0; l < size; l += 2 {
				evens |= 1 << l
			}
			want = append(want, evens)
		} else {
			want = append(want, 0)
		}
		require.Equal(t, want, out.s[tid*12:tid*12+12], "thread %d (lane %d)", tid, lane)
	}
}

func TestWarpInclusiveScan(t *testing.T) {
	f := function(t, load(t, warpSource), "warp_scan")
	const block, blocks = 128, 8
	in, out := alloc[int32](t, block*blocks), alloc[int32](t, block*blocks)
	for i := range in.s {
		in.s[i] = int32(bits.OnesCount(uint(i)))
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev())
	launch(t, f, dim(blocks, 1, 1), dim(block, 1, 1), 0, &args)
	W := jit.WarpSize
	for i := range in.s {
		want := int32(0)
		for j := i - i%W; j <= i; j++ {
			want += in.s[j]
		}
		require.Equal(t, want, out.s[i], "element %d", i)
	}
}

// The same checks with 64-lane warps (AMD's wavefront), which $CUBEHIP_CPU_WARP_SIZE=64
// selects when a process starts; set directly here, and restored.
func TestWarpSize64(t *testing.T) {
	if jit.WarpSize == 64 {
		t.Skip("the other tests already run with 64 lanes")
	}
	jit.WarpSize = 64
	defer func() { jit.WarpSize = 32 }()
	t.Run("lanes", TestWarpLaneSemantics)
	t.Run("scan", TestWarpInclusiveScan)
	t.Run("block sum", TestWarpBlockSum)
}
