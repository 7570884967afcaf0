package jit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Cooperative groups as real code uses them: the block's rank and sync, tiles of 16
// reducing with shfl_down and cg::reduce, tile votes and a tile scan.
func TestCooperativeGroupsTiles(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tiles(const int* in, int* out) {
	cg::thread_block block = cg::this_thread_block();
	__shared__ int staged[256];
	staged[block.thread_rank()] = in[blockIdx.x * block.size() + block.thread_rank()];
	block.sync();
	// Reverse through shared memory: needs the block barrier to be real.
	int v = staged[block.size() - 1 - block.thread_rank()];
	cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
	int s = v;
	for (int o = tile.size() / 2; o > 0; o /= 2) s += tile.shfl_down(s, o);
	int r = cg::reduce(tile, v, cg::plus<int>());
	int scan = cg::inclusive_scan(tile, v);
	unsigned long long odd = tile.ballot(v & 1);
	int* o = out + (blockIdx.x * block.size() + block.thread_rank()) * 6;
	o[0] = tile.thread_rank() == 0 ? s : -1;
	o[1] = r;
	o[2] = scan;
	o[3] = (int)odd;
	o[4] = tile.any(v == 5) + 2 * tile.all(v < 100);
	o[5] = tile.meta_group_rank();
}
`
	const block, blocks = 128, 3
	in, out := alloc[int32](t, block*blocks), alloc[int32](t, block*blocks*6)
	for i := range in.s {
		in.s[i] = int32((i*7 + 3) % 23)
	}
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(out.dev())
	launch(t, function(t, load(t, src), "tiles"), dim(blocks, 1, 1), dim(block, 1, 1), 0, &args)
	for b := range blocks {
		v := func(r int) int32 { return in.s[b*block+block-1-r] } // the reversed value rank r holds
		for r := range block {
			base := r - r%16
			var sum, scan, odd, any5 int32
			all := int32(2)
			for k := range 16 {
				x := v(base + k)
				sum += x
				if k <= r%16 {
					scan += x
				}
				if x&1 == 1 {
					odd |= 1 << k
				}
				if x == 5 {
					any5 = 1
				}
			}
			first := int32(-1)
			if r%16 == 0 {
				first = sum
			}
			want := []int32{first, sum, scan, odd, any5 + all, int32(r / 16)}
			got := out.s[(b*block+r)*6 : (b*block+r)*6+6]
			require.Equal(t, want, got, "block %d rank %d", b, r)
		}
	}
}

// The grid group gives each thread its place in the whole launch, and is not valid in a
// launch that is not cooperative (its sync(): cooperative_test.go).
func TestCooperativeGroupsGrid(t *testing.T) {
	const src = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void ranks(unsigned long long* out) {
	cg::grid_group g = cg::this_grid();
	out[g.thread_rank()] = g.size() * 1000 + g.thread_rank() * 2 + g.is_valid();
}
`
	const block, blocks = 32, 4
	out := alloc[uint64](t, block*blocks*2)
	var args hipsys.KernelArgs
	args.Ptr(out.dev())
	launch(t, function(t, load(t, src), "ranks"), dim(blocks, 2, 1), dim(block, 1, 1), 0, &args)
	for i, v := range out.s {
		require.Equal(t, uint64(block*blocks*2*1000+2*i), v, "thread %d", i)
	}
}
