package jit_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A launch of few threads whose blocks are long (here, each waits for its partner block)
// runs over the pool: the thread count alone would have kept it on the caller, one block
// after another. Blocks 1 and 2 each raise a flag and wait, up to 2 s, for the other's:
// they meet only when they run at the same time.
func TestFewThreadsLongBlocksSpread(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the pool has no worker")
	}
	src := `#include <chrono>
extern "C" __global__ void meet(int* flags, int* met) {
	const auto start = std::chrono::steady_clock::now();
	const auto waited = [&] { return std::chrono::steady_clock::now() - start; };
	if (blockIdx.x == 0) {
		// Long enough that the rest of the launch is worth the pool's wake-ups.
		while (waited() < std::chrono::milliseconds(1)) {}
		return;
	}
	if (threadIdx.x != 0) return;
	const int me = blockIdx.x, other = 3 - blockIdx.x;
	__atomic_store_n(&flags[me], 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&flags[other], __ATOMIC_SEQ_CST) && waited() < std::chrono::seconds(2)) {}
	met[me] = __atomic_load_n(&flags[other], __ATOMIC_SEQ_CST);
}`
	f := function(t, load(t, src), "meet")
	flags, met := alloc[int32](t, 4), alloc[int32](t, 4)
	var args hipsys.KernelArgs
	args.Ptr(flags.dev()).Ptr(met.dev())
	launch(t, f, dim(3, 1, 1), dim(64, 1, 1), 0, &args)
	assert.Equal(t, []int32{0, 1, 1, 0}, met.s, "blocks 1 and 2 ran one after the other")
}
