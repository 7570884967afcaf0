package jit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// Kernels of a cooperative launch, as CUDA's and HIP's programming guides use
// this_grid().sync(): a reduction whose blocks each write a partial sum before the grid's
// barrier and one thread sums the partials after it; rounds of a barrier that every block
// must pass before any reads what the round wrote; the grid group's members.
const cooperativeSource = `#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_sum(const int* in, long long* partial, long long* out, int n) {
	cg::grid_group grid = cg::this_grid();
	cg::thread_block block = cg::this_thread_block();
	__shared__ long long s[1024];
	long long v = 0;
	for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) v += in[i];
	s[block.thread_rank()] = v;
	block.sync();
	for (unsigned k = block.size() / 2; k > 0; k /= 2) {
		if (block.thread_rank() < k) s[block.thread_rank()] += s[block.thread_rank() + k];
		block.sync();
	}
	if (block.thread_rank() == 0) partial[grid.block_rank()] = s[0];
	grid.sync();
	if (grid.thread_rank() == 0) {
		long long t = 0;
		for (unsigned long long b = 0; b < grid.num_blocks(); b++) t += partial[b];
		*out = t;
	}
}

// Each round every thread adds one to its block's slot; after the grid's barrier, each
// block reads every other block's slot, which must hold exactly the rounds so far.
extern "C" __global__ void rounds(int* slots, int* bad, int nrounds) {
	cg::grid_group grid = cg::this_grid();
	const unsigned nb = gridDim.x;
	for (int r = 1; r <= nrounds; r++) {
		if (threadIdx.x == 0) slots[blockIdx.x] = r;
		cg::sync(grid);
		if (threadIdx.x == 0)
			for (unsigned b = 0; b < nb; b++)
				if (slots[b] != r) atomicAdd(bad, 1);
		grid.sync();
	}
}

extern "C" __global__ void members(unsigned long long* out) {
	cg::grid_group g = cg::this_grid();
	out[g.thread_rank()] = g.size() * 100000 + g.num_blocks() * 1000 + g.block_rank() * 10 + g.is_valid();
}

// Odd blocks return before the barrier: the others are not left waiting for them.
extern "C" __global__ void early_exit(int* out) {
	if (blockIdx.x % 2 == 1) return;
	out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
	cg::this_grid().sync();
	out[blockIdx.x * blockDim.x + threadIdx.x] += 1;
	cg::this_grid().sync();
}

// Block 1 faults while the others wait at the barrier: the launch ends, nothing hangs.
extern "C" __global__ void fault_at_barrier(int* p) {
	if (blockIdx.x == 1 && threadIdx.x == 0) *(volatile int*)0 = 1;
	cg::this_grid().sync();
	p[blockIdx.x] = 1;
}
`

func TestCooperativeGridSum(t *testing.T) {
	m := load(t, cooperativeSource)
	f := function(t, m, "grid_sum")
	const block = 256
	blocks := uint32(jit.CooperativeLimit(dim(block, 1, 1), 0))
	require.GreaterOrEqual(t, blocks, uint32(4), "four blocks of 256 per multiprocessor")
	const n = 100003
	in := alloc[int32](t, n)
	var want int64
	for i := range in.s {
		in.s[i] = int32(i%1000) - 300
		want += int64(in.s[i])
	}
	partial, out := alloc[int64](t, int(blocks)), alloc[int64](t, 1)
	var args hipsys.KernelArgs
	args.Ptr(in.dev()).Ptr(partial.dev()).Ptr(out.dev()).I32(n)
	for _, grid := range []uint32{1, 2, blocks} {
		out.s[0] = 0
		require.NoError(t, f.LaunchCooperative(dim(grid, 1, 1), dim(block, 1, 1), 0, args.Buffer(), args.Offsets()), "grid %d", grid)
		assert.Equal(t, want, out.s[0], "grid of %d blocks", grid)
	}
}

func TestCooperativeRounds(t *testing.T) {
	m := load(t, cooperativeSource)
	f := function(t, m, "rounds")
	blocks := uint32(jit.CooperativeLimit(dim(64, 1, 1), 0))
	slots, bad := alloc[int32](t, int(blocks)), alloc[int32](t, 1)
	var args hipsys.KernelArgs
	args.Ptr(slots.dev()).Ptr(bad.dev()).I32(50)
	require.NoError(t, f.LaunchCooperative(dim(blocks, 1, 1), dim(64, 1, 1), 0, args.Buffer(), args.Offsets()))
	assert.Zero(t, bad.s[0], "a block read a slot of the round before: the barrier let it through early")
	for b, v := range slots.s {
		assert.Equal(t, int32(50), v, "block %d", b)
	}
}

func TestCooperativeMembers(t *testing.T) {
	m := load(t, cooperativeSource)
	f := function(t, m, "members")
	const blocks, block = 3, 32
	out := alloc[uint64](t, blocks*block)
	var args hipsys.KernelArgs
	args.Ptr(out.dev())
	for _, coop := range []bool{false, true} {
		clear(out.s)
		if coop {
			require.NoError(t, f.LaunchCooperative(dim(blocks, 1, 1), dim(block, 1, 1), 0, args.Buffer(), args.Offsets()))
		} else {
			launch(t, f, dim(blocks, 1, 1), dim(block, 1, 1), 0, &args)
		}
		for i, v := range out.s {
			valid := uint64(0)
			if coop {
				valid = 1 // is_valid(): only in a cooperative launch
			}
			assert.Equal(t, uint64(blocks*block*100000+blocks*1000+(i/block)*10)+valid, v, "thread %d, cooperative %v", i, coop)
		}
	}
}

func TestCooperativeEarlyExitAndFault(t *testing.T) {
	m := load(t, cooperativeSource)
	const block = 32
	blocks := uint32(min(jit.CooperativeLimit(dim(block, 1, 1), 0), 8))
	out := alloc[int32](t, int(blocks)*block)
	var args hipsys.KernelArgs
	args.Ptr(out.dev())
	require.NoError(t, function(t, m, "early_exit").LaunchCooperative(dim(blocks, 1, 1), dim(block, 1, 1), 0, args.Buffer(), args.Offsets()))
	for i, v := range out.s {
		want := int32(2)
		if (i/block)%2 == 1 {
			want = 0
		}
		require.Equal(t, want, v, "thread %d", i)
	}

	done := make(chan error, 1)
	go func() {
		done <- function(t, m, "fault_at_barrier").LaunchCooperative(dim(blocks, 1, 1), dim(block, 1, 1), 0, args.Buffer(), args.Offsets())
	}()
	select {
	case err := <-done:
		requireFault(t, err, hipsys.ErrorIllegalAddress, "fault_at_barrier", "[1, 2)")
	case <-time.After(time.Minute):
		t.Fatal("a fault in one block left the others waiting at the grid's barrier")
	}
}

// A grid the device cannot hold at once is refused before any block runs, naming the
// limit, as HIP's hipErrorCooperativeLaunchTooLarge.
func TestCooperativeTooLarge(t *testing.T) {
	m := load(t, cooperativeSource)
	f := function(t, m, "grid_sum")
	limit := jit.CooperativeLimit(dim(256, 1, 1), 0)
	assert.Equal(t, jit.MaxActiveBlocksPerMultiprocessor(256, 0)*jit.Multiprocessors(), limit)
	out := alloc[int64](t, 1)
	out.s[0] = 7
	var args hipsys.KernelArgs
	args.Ptr(0).Ptr(0).Ptr(out.dev()).I32(0)
	err := f.LaunchCooperative(dim(uint32(limit)+1, 1, 1), dim(256, 1, 1), 0, args.Buffer(), args.Offsets())
	require.ErrorIs(t, err, hipsys.ErrorCooperativeLaunchTooLarge)
	assert.Contains(t, err.Error(), "hipModuleLaunchCooperativeKernel")
	assert.Contains(t, err.Error(), "over the "+strconv.Itoa(limit)+" the device holds at once")
	assert.Equal(t, int64(7), out.s[0], "nothing ran")
	// In y and z as well: the limit is on blocks.
	err = f.LaunchCooperative(dim(1, uint32(limit), 2), dim(256, 1, 1), 0, args.Buffer(), args.Offsets())
	require.ErrorIs(t, err, hipsys.ErrorCooperativeLaunchTooLarge)
}

func TestMaxActiveBlocksPerMultiprocessor(t *testing.T) {
	w := jit.WarpSize
	for _, c := range []struct {
		threads int
		shared  uint64
		want    int
	}{
		{256, 0, 4}, {1024, 0, 1}, {1, 0, 1024 / w}, {w + 1, 0, 1024 / (2 * w)}, {64, 64 << 10, 2},
		{64, 100 << 10, 1}, {0, 0, 0}, {1025, 0, 0}, {64, jit.MaxSharedMemPerBlock + 1, 0},
	} {
		assert.Equal(t, c.want, jit.MaxActiveBlocksPerMultiprocessor(c.threads, c.shared), "%d threads, %d shared bytes", c.threads, c.shared)
	}
}

// this_grid().sync() in a launch that is not cooperative ends the launch with an error
// naming it (its blocks do not all run at once, so the barrier could never complete),
// on a grid of one block as of many: never a hang, never a barrier silently skipped.
func TestGridSyncWithoutCooperativeLaunch(t *testing.T) {
	m := load(t, cooperativeSource)
	f := function(t, m, "rounds")
	slots, bad := alloc[int32](t, 64), alloc[int32](t, 1)
	var args hipsys.KernelArgs
	args.Ptr(slots.dev()).Ptr(bad.dev()).I32(3)
	for _, blocks := range []uint32{1, 64} {
		err := f.Launch(dim(blocks, 1, 1), dim(64, 1, 1), 0, args.Buffer(), args.Offsets())
		require.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "grid of %d", blocks)
		assert.Contains(t, err.Error(), "kernel rounds called this_grid().sync()")
		assert.Contains(t, err.Error(), "not cooperative")
		assert.Contains(t, err.Error(), "hipModuleLaunchCooperativeKernel")
	}
}
