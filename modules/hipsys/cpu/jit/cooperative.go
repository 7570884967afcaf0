package jit

import (
	"fmt"
	"runtime"

	"github.com/klauspost/cpuid/v2"

	"github.com/cubehip/cubehip/modules/hipsys"
)

const callLaunchCooperative = "hipModuleLaunchCooperativeKernel"

// MaxThreadsPerMultiprocessor is how many threads of a cooperative grid one
// multiprocessor (a CPU) holds at once: as many as one largest block. A cooperative
// launch keeps every thread of its grid alive at once (a fiber with its own stack, each
// block on an OS thread of its own), and a CPU runs one block at a time, so more blocks
// per CPU than fill one block's worth of threads buy the kernel nothing but stacks and
// switches.
const MaxThreadsPerMultiprocessor = MaxThreadsPerBlock

// Multiprocessors is the device's multiprocessor count (hipDeviceProp_t's
// multiProcessorCount): the CPUs this process may run on, as the cpu platform reports it.
func Multiprocessors() int {
	cores := runtime.NumCPU()
	if cpuid.CPU.LogicalCores > 0 && cpuid.CPU.LogicalCores < cores {
		// cpuid counts one package; NumCPU is what this process may run on. The smaller
		// is the honest count of cores a launch spreads over.
		cores = cpuid.CPU.LogicalCores
	}
	return max(cores, 1)
}

// MaxActiveBlocksPerMultiprocessor is hipModuleOccupancyMaxActiveBlocksPerMultiprocessor on
// the cpu device: how many blocks of blockThreads threads, each with dynShared bytes of
// dynamic shared memory, one multiprocessor holds at once, as a GPU reckons it: the
// threads it holds (MaxThreadsPerMultiprocessor, a block counted in whole warps) and the
// shared memory it has (MaxSharedMemPerBlock, the device's MaxSharedMemPerMultiProcessor),
// whichever allows fewer. A block that cannot run at all (no threads, more than
// MaxThreadsPerBlock, more dynamic shared memory than a block may have) gives 0.
func MaxActiveBlocksPerMultiprocessor(blockThreads int, dynShared uint64) int {
	if blockThreads <= 0 || blockThreads > MaxThreadsPerBlock || dynShared > MaxSharedMemPerBlock {
		return 0
	}
	warps := (blockThreads + WarpSize - 1) / WarpSize
	n := MaxThreadsPerMultiprocessor / (warps * WarpSize)
	if dynShared > 0 {
		n = min(n, int(MaxSharedMemPerBlock/dynShared))
	}
	return n
}

// CooperativeLimit is the most blocks a cooperative launch of this block shape and
// dynamic shared memory may have: MaxActiveBlocksPerMultiprocessor times Multiprocessors,
// every block running at once.
func CooperativeLimit(block hipsys.Dim3, sharedMem uint32) int {
	return MaxActiveBlocksPerMultiprocessor(int(min(block.Count(), MaxThreadsPerBlock+1)), uint64(sharedMem)) * Multiprocessors()
}

// CheckCooperative refuses a cooperative grid the device cannot hold at once with
// hipErrorCooperativeLaunchTooLarge, naming the limit; nil for one it can (its shape is
// otherwise checked as any launch's).
func CheckCooperative(grid, block hipsys.Dim3, sharedMem uint32) error {
	limit := CooperativeLimit(block, sharedMem)
	if n := uint64(grid.X) * uint64(grid.Y) * uint64(grid.Z); n > uint64(limit) {
		per := MaxActiveBlocksPerMultiprocessor(int(min(block.Count(), MaxThreadsPerBlock+1)), uint64(sharedMem))
		return hipsys.NewError("cpu", callLaunchCooperative, hipsys.ErrorCooperativeLaunchTooLarge, fmt.Sprintf(
			"a cooperative grid of %d blocks, over the %d the device holds at once (%d blocks of %d threads with %d bytes of dynamic shared memory per multiprocessor × %d multiprocessors)",
			n, limit, per, block.Count(), sharedMem, Multiprocessors()))
	}
	return nil
}

// misuseError is the error of a launch that kernel name ended at a grid-wide construct
// its launch cannot run (CUBEHIP_MISUSE_*, cubehip_abi.h).
func misuseError(name string, what int) error {
	detail := fmt.Sprintf("kernel %s stopped at a grid-wide construct its launch cannot run (%d)", name, what)
	switch what {
	case misuseGridSync:
		detail = "kernel " + name + " called this_grid().sync() (cooperative_groups::grid_group::sync) in a launch that is not cooperative: " +
			"a grid-wide barrier needs every block of the grid running at once; launch it cooperatively " +
			"(hipModuleLaunchCooperativeKernel); the launch ended there"
	case misuseGridUnseen:
		detail = "kernel " + name + " called this_grid().sync() where its threads run one after another (the jit did not see the kernel " +
			"use cooperative groups: name cooperative_groups in the source); the launch ended there"
	}
	return hipsys.NewError("cpu", callLaunch, hipsys.ErrorLaunchFailure, detail)
}
