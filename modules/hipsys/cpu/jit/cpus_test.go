package jit_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// whereSource records, for each block, the CPU and the OS thread that ran it. Each block
// takes about 50 µs, so a launch of 128 is long enough for the pool's workers to join.
const whereSource = `#include <chrono>
#include <sched.h>
#include <unistd.h>
extern "C" __global__ void where(int* cpu, int* tid) {
	if (threadIdx.x != 0) return;
	const auto start = std::chrono::steady_clock::now();
	while (std::chrono::steady_clock::now() - start < std::chrono::microseconds(50)) {}
	cpu[blockIdx.x] = sched_getcpu();
	tid[blockIdx.x] = gettid();
}`

// A launch's helpers run on the CPUs other than the launching thread's, never on its
// own, where they would only take turns with it: on a machine whose CPUs report no
// shared cache (the 2-core dev VM), the kernel queued a woken worker on the launching
// thread's CPU while the other stayed idle, and the launch ran on one core. The launching
// thread is pinned to one CPU here, so "its CPU" stays one CPU for the whole launch.
func TestHelpersRunOnOtherCPUs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &all))
	if all.Count() < 2 {
		t.Skip("one CPU: the pool has no worker")
	}
	mine := -1
	for c := 0; mine < 0; c++ {
		if all.IsSet(c) {
			mine = c
		}
	}
	const blocks = 128
	f := function(t, load(t, whereSource), "where")
	cpu, tid := alloc[int32](t, blocks), alloc[int32](t, blocks)
	var args hipsys.KernelArgs
	args.Ptr(cpu.dev()).Ptr(tid.dev())
	// The pool is sized by the CPUs of the thread that launches first: one launch before
	// pinning, should this test be the process's first.
	launch(t, f, dim(blocks, 1, 1), dim(64, 1, 1), 0, &args)

	var one unix.CPUSet
	one.Set(mine)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Skipf("cannot pin the launching thread to CPU %d: %v", mine, err)
	}
	defer func() { require.NoError(t, unix.SchedSetaffinity(0, &all)) }()
	me := int32(unix.Gettid())
	const launches = 10
	helped, beside := 0, 0 // blocks a helper ran; those it ran on the launching thread's CPU
	for range launches {
		launch(t, f, dim(blocks, 1, 1), dim(64, 1, 1), 0, &args)
		for b := range blocks {
			if tid.s[b] == me {
				require.Equal(t, int32(mine), cpu.s[b], "block %d ran on the launching thread, which is pinned", b)
				continue
			}
			helped++
			if cpu.s[b] == int32(mine) {
				beside++
			}
		}
	}
	assert.NotZero(t, helped, "no block of %d launches of %d ran on a helper", launches, blocks)
	assert.Zero(t, beside, "of %d blocks helpers ran, on the launching thread's CPU", helped)
}
