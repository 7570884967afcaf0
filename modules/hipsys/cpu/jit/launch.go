package jit

/*
#cgo noescape cubehip_run
#cgo nocallback cubehip_run
#include "runner.h"
*/
import "C"

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Limits of a launch on the cpu platform; the platform reports the same numbers in its
// device properties.
const (
	MaxThreadsPerBlock   = C.CUBEHIP_MAX_THREADS
	MaxSharedMemPerBlock = C.CUBEHIP_MAX_SHARED      // shared bytes per block, static and dynamic
	MaxParamBytes        = C.CUBEHIP_MAX_PARAM_BYTES // packed kernel arguments
)

// The grid-wide constructs a kernel can meet that its launch cannot run (cubehip_abi.h).
const (
	misuseGridSync   = C.CUBEHIP_MISUSE_GRID_SYNC
	misuseGridUnseen = C.CUBEHIP_MISUSE_GRID_UNSEEN
)

// WarpSize is the lanes of a warp on the cpu platform: 32, as on NVIDIA GPUs and AMD's
// RDNA, unless $CUBEHIP_CPU_WARP_SIZE is 64 (AMD's CDNA wavefront) when the process starts.
// Kernels are compiled for it, and it is part of their cache key.
var WarpSize = warpSizeFromEnv(os.Getenv("CUBEHIP_CPU_WARP_SIZE"))

// warpSizeFromEnv takes "64" for 64 lanes; anything else is the usual 32.
func warpSizeFromEnv(v string) int {
	if strings.TrimSpace(v) == "64" {
		return 64
	}
	return 32
}

// MaxBlockDim and MaxGridDim bound each dimension, as AMD GPUs do.
var (
	MaxBlockDim = [3]uint32{1024, 1024, 64}
	MaxGridDim  = [3]uint32{1<<31 - 1, 65535, 65535}
)

const callLaunch = "hipModuleLaunchKernel"

// Preallocated: a rejected launch on a hot path allocates nothing.
var (
	errConfig = hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidConfiguration,
		"grid and block dimensions must be nonzero, blocks at most 1024 threads within (1024, 1024, 64), grids within (2147483647, 65535, 65535)")
	errParams   = hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidValue, "kernel argument block over 4096 bytes or an argument past its end")
	errUnloaded = hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidHandle, "function of an unloaded module")
)

// Function is one kernel entry of a loaded Module.
//
// One OS thread runs one block at a time, and each entry runs one of three ways, chosen
// per entry when it is compiled:
//
//   - Loop: an entry that names no barrier and no warp function runs each range of blocks
//     as one call, which loops over the blocks and their threads.
//   - Regions: an entry with __syncthreads (and warp shuffles) is rewritten in its source
//     (regions.go, prelude/cubehip_regions.h) into code that runs once per block, in
//     which the statements between two barriers are one loop over the block's threads (a
//     region), so a barrier is where one loop ends and the next begins and costs no
//     switch. Loops, ifs and blocks that hold barriers stay as they were, run once per
//     block: their conditions, a for's init and step must be block-uniform by
//     construction (the block's indices and sizes, parameters the body never assigns,
//     their loop variables, uniform locals, constants and macros; HIP requires a barrier's
//     conditions to be uniform anyway). A local that one region sets and a later one
//     reads is recomputed in each region when it only depends on the thread's and block's
//     indices, parameters and constants (tid, row, col), else kept in a per-thread slot,
//     an array indexed by the thread's linear index; `return` marks the thread done for
//     the regions after. A shuffle (__shfl, _up, _down, _xor and their _sync forms)
//     splits its statement's region: every lane posts its value at the end of one, and
//     reads its source lane's in the next, with the fibers' answers at 32 and 64 lanes.
//     Atomics on __shared__ arrays become plain updates there: the block's threads run
//     one after another on one OS thread, so nothing races with them.
//   - Fibers: every other entry with barriers or warp functions, and every entry of a
//     module whose barriers or warp functions are out of the rewrite's sight (in a
//     __device__ function, a macro or a header), runs each thread as a fiber with a
//     64 KiB stack (guard page below), switched by a register-only context switch
//     (prelude/cubehip_fiber.h) at each barrier; fibers of a module that calls warp
//     functions also wait, lane by lane, at each warp collective until every running
//     lane of the warp reaches one (prelude/cubehip_warp.h). An if whose condition is
//     the thread's and whose body holds shuffles but no barrier (`if (warp == 0)`, a
//     second level of a block reduction) runs as regions too: a region stores each
//     thread's condition, the body's regions skip the threads without it, and its
//     shuffles read only lanes with it (the others leave the caller's value, as the
//     fibers' collectives do); so do such ifs inside one another, each thread's flag the
//     outer one's and its own condition. What falls back: a barrier behind a condition
//     that names the thread's index or a per-thread local, or a shuffle in such an if
//     with an else (the fibers group lanes that diverge to different shuffles into one
//     collective); a barrier or shuffle in a switch or an expression;
//     a shuffle in a __device__ function; votes, __syncwarp, matches, reductions and cooperative
//     groups; __syncthreads_count/and/or (the fibers count the block's votes at the
//     barrier); break or continue out of a region; goto;
//     lambdas; a parameter the body assigns; a local live across a barrier declared auto,
//     with others, as a reference or initialized in place; a shuffle in a kernel that
//     returns early. With $CUBEHIP_LOG=debug each entry that runs as fibers is logged
//     with the reason when it is compiled; $CUBEHIP_CPU_REGIONS=0 runs every barrier
//     entry as fibers (part of the code key). Should the rewritten source not compile,
//     the module is compiled again as fibers, so the rewrite never turns a kernel that
//     compiles into one that does not, and a compile error is always the user's own.
//
// Source to source rather than on LLVM IR: the jit already scans and rewrites entry
// bodies, g++ is the one compiler it can count on (clang is not installed by default),
// and what the rewrite leaves is ordinary C++ that GCC vectorizes across threads: each
// region is a loop over an int thread counter, which GCC splits at `if (t < k)` and
// vectorizes, as it does cubehip_entry.h's thread loop. The structured subset covers the
// barrier kernels HIP code is made of (reductions, scans, tiled matrix products,
// histograms, stencils with halos, warp-shuffle reductions); the fibers remain for the
// rest, with every construct's answers checked against them (regions_test.go).
//
// A block's threads form warps of WarpSize lanes (32; 64 with $CUBEHIP_CPU_WARP_SIZE=64).
// __device__ functions that read threadIdx & co. see thread-local copies the runner
// keeps current, which costs a store per thread, so only modules that need it pay it.
//
// Blocks are spread over a persistent pool of pthreads, one pinned to each CPU the first
// launching thread may use, in chunks of whole blocks: one cgo call per launch, at most
// one wake-up per worker. The launching thread works too, and a launch wakes only the
// workers of the other CPUs, so its CPU stays its own: a woken worker left free to run
// anywhere was queued on the launching thread's CPU, taking turns with it while another
// CPU idled, where the CPUs report no shared cache (the 2-core dev VM; runner.c says
// why). A worker whose pinning is refused runs unpinned. A launch of one block runs
// inline on the caller without waking the pool; so does one of at most 4096 threads,
// unless its first block, run and timed on the caller, shows that the rest would take
// over 20 µs there (a few long blocks: a histogram's per-thread runs), when the rest goes
// to the pool.
type Function struct {
	m      *Module
	name   string
	run    unsafe.Pointer       // cubehip_run_<name>
	sizes  []uint32             // each parameter's size, from cubehip_sig_<name>
	params []hipsys.KernelParam // each parameter's place in the parameter block and kind
}

// Params lists the kernel's parameters in declaration order: each one's offset in the
// parameter block as the C++ ABI lays it out (aligned to its type), its size, and whether
// it is a pointer or a value. Names are not kept (""). The slice is the caller's.
func (f *Function) Params() []hipsys.KernelParam {
	return append([]hipsys.KernelParam(nil), f.params...)
}

// Name is the entry's name.
func (f *Function) Name() string { return f.name }

// ParamSizes is the size in bytes of each of the entry's parameters, in declaration
// order, as its compiled signature gives them (sizeof of each type). The slice is the
// Function's own and must not be modified.
func (f *Function) ParamSizes() []uint32 { return f.sizes }

// Launch runs the kernel over grid×block and returns when every block has finished
// (the cpu platform's stream worker calls it and is the one that makes it asynchronous).
// params holds the packed arguments and offsets each one's offset (hipsys.KernelArgs);
// both are read before the first block runs and never kept. Safe for concurrent use on
// the same or different functions. It allocates nothing unless it fails on the argument
// count.
//
// Errors: hipErrorInvalidConfiguration for a zero or oversized grid or block,
// hipErrorInvalidValue for shared memory (the dynamic bytes and the module's static
// variables) over MaxSharedMemPerBlock or arguments
// that do not match the kernel's, hipErrorInvalidHandle once the module is closed. A
// kernel that faults ends the launch with the error a GPU gives, naming the kernel
// (fault.go): hipErrorIllegalAddress for a bad memory access, hipErrorLaunchFailure for
// the others.
//
// A kernel that faults ends its launch, not the process (fault.c, fault.go): an access
// to an unmapped address (SIGSEGV, SIGBUS; a fiber that overflows its 64 KiB stack into
// the guard page too) is hipErrorIllegalAddress, an integer division by zero (SIGFPE),
// __trap() (SIGILL), abort() and a failed assert (SIGABRT) are hipErrorLaunchFailure,
// each with a message naming the kernel, the fault and the blocks that thread ran. As on
// a GPU the launch ends there: blocks not yet started never run. Go's runtime owns those
// signals' handlers, so at the first launch handlers are put in front of Go's (with
// SA_ONSTACK, as Go requires): the runner sets a thread-local guard around each range of
// blocks it runs, on the pool's workers and on the launching thread alike, and a signal
// the CPU raised while the guard is set jumps back to it (sigsetjmp/siglongjmp; from a
// fiber's stack too, the handler running on the thread's alternate signal stack). Every
// other signal goes on to the handler that was there before, Go's, so Go's nil-pointer
// panics and os/signal behave as before. A kernel's C++ destructors do not run, and a
// libc lock it held stays held. $CUBEHIP_CPU_CATCH_FAULTS=0 (read when the process
// starts) installs nothing: a fault then ends the process, for a core dump with the
// kernel's frames. Kernels share the process's memory: a stray write that lands in
// mapped memory corrupts the host process silently.
//
// Shared memory is the exception: a block's static __shared__ variables and its dynamic
// buffer live in its OS thread's shared arena (runner.c, prelude/cubehip_shared.h), a
// mapping apart from every state of the runtime, with inaccessible pages on either side
// of it and between the two, so a kernel that overflows its shared memory faults
// (hipErrorIllegalAddress) rather than corrupting cubehip. The static variables and the
// dynamic bytes together are at most MaxSharedMemPerBlock.
//
// A launch may run for at most TimeLimit (SetTimeLimit, $CUBEHIP_CPU_TIME_LIMIT; none by
// default): one that runs past it ends with hipErrorLaunchTimeOut naming the kernel and
// the limit. Its threads are interrupted by a signal of their own (fault.c) and jump back
// as from a fault, so a kernel spinning in `while (1) {}` is stopped too; blocks not yet
// started never run, and the pool's and a cooperative launch's threads go on to later
// launches.
func (f *Function) Launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error {
	return f.launch(grid, block, sharedMem, params, offsets, false)
}

// LaunchCooperative is Launch with every block of the grid running at once, each on an
// OS thread of its own, so that the kernel's grid-wide barrier (cooperative groups'
// this_grid().sync()) is reached by every block; grid_group::is_valid() is true in it.
// A grid over CooperativeLimit(block, sharedMem) blocks is hipErrorCooperativeLaunchTooLarge
// naming the limit, and nothing runs; so is a grid whose threads cannot all be started.
//
// LaunchCooperative (hipModuleLaunchCooperativeKernel) runs every block of the grid at
// once, so that cooperative groups' this_grid().sync() is a barrier every block reaches:
// the launching thread runs block 0 and each other block runs on a thread of a second
// pool (runner.c), grown on demand and kept, unpinned, since a cooperative grid may have
// more blocks than the host has CPUs. A kernel naming cooperative groups runs its threads
// as fibers, so grid_group::sync() is a block barrier, a wait of the block's OS thread at
// the grid's barrier (a mutex and a condition variable: its waiters may outnumber the
// CPUs), and a second block barrier. A block that returns no longer counts at the grid's
// barrier; a block that faults ends it for all, and the launch reports the first fault.
// The device holds at once MaxActiveBlocksPerMultiprocessor blocks per multiprocessor (a
// CPU): as many threads as one largest block, in whole warps, within the shared memory
// a multiprocessor has, as a GPU reckons its occupancy; a grid over that times
// Multiprocessors() is hipErrorCooperativeLaunchTooLarge naming the limit, and nothing
// runs. grid_group::is_valid() is true only in such a launch. this_grid().sync() in a
// launch that is not cooperative cannot be honoured (its blocks do not all run at once,
// so the barrier would never complete): the kernel traps there and the launch ends with
// hipErrorLaunchFailure naming the construct, rather than hang or skip the barrier; with
// $CUBEHIP_CPU_CATCH_FAULTS=0 the trap ends the process, as any fault does.
func (f *Function) LaunchCooperative(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error {
	if f == nil || f.m == nil {
		return errUnloaded
	}
	if err := CheckCooperative(grid, block, sharedMem); err != nil {
		return err
	}
	return f.launch(grid, block, sharedMem, params, offsets, true)
}

func (f *Function) launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32, coop bool) error {
	if f == nil || f.m == nil {
		return errUnloaded
	}
	if grid.X == 0 || grid.Y == 0 || grid.Z == 0 || block.X == 0 || block.Y == 0 || block.Z == 0 ||
		block.X > MaxBlockDim[0] || block.Y > MaxBlockDim[1] || block.Z > MaxBlockDim[2] || block.Count() > MaxThreadsPerBlock ||
		grid.X > MaxGridDim[0] || grid.Y > MaxGridDim[1] || grid.Z > MaxGridDim[2] {
		return errConfig
	}
	if sharedMem > MaxSharedMemPerBlock || uint64(sharedMem)+f.m.staticShared > MaxSharedMemPerBlock {
		return f.sharedError(sharedMem)
	}
	if len(offsets) != len(f.sizes) {
		return hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidValue,
			"kernel "+f.name+" takes "+strconv.Itoa(len(f.sizes))+" arguments, got "+strconv.Itoa(len(offsets)))
	}
	if len(params) > MaxParamBytes {
		return errParams
	}
	for i, off := range offsets {
		if uint64(off)+uint64(f.sizes[i]) > uint64(len(params)) {
			return errParams
		}
	}
	m := f.m
	m.users.Add(1)
	if m.closed.Load() {
		m.users.Add(-1)
		return errUnloaded
	}
	var buf unsafe.Pointer
	var offs *C.uint32_t
	if len(params) > 0 {
		buf = unsafe.Pointer(&params[0])
	}
	if len(offsets) > 0 {
		offs = (*C.uint32_t)(unsafe.Pointer(&offsets[0]))
	}
	barrier, cooperative := C.int(0), C.int(0)
	if m.barrier {
		barrier = 1
	}
	if coop {
		cooperative = 1
	}
	installFaultHandlers()
	useShared := C.int(0)
	if m.staticShared > 0 || sharedMem > 0 {
		useShared = 1
	}
	limit := startLimit()
	var fault C.cubehip_fault
	// SAFETY: params and offsets are Go memory holding no Go pointers; cubehip_run copies
	// them before running any block and keeps nothing after it returns (noescape). fault
	// is written before it returns and holds no pointer.
	rc := C.cubehip_run(f.run, buf, C.uint32_t(len(params)), offs, C.uint32_t(len(offsets)),
		C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z),
		C.uint32_t(block.X), C.uint32_t(block.Y), C.uint32_t(block.Z), C.uint32_t(sharedMem),
		C.uint64_t(m.staticShared), useShared, barrier, cooperative, limit.cStop(), &fault)
	m.users.Add(-1)
	limit.end()
	if rc == C.CUBEHIP_FAULTED && fault.signal == C.CUBEHIP_FAULT_TIMEOUT {
		return timeoutError(f.name, &fault, limit.limit)
	}
	if rc == C.CUBEHIP_FAULTED {
		return faultError(f.name, &fault)
	}
	if rc == C.CUBEHIP_MISUSED {
		return misuseError(f.name, int(fault.code))
	}
	if rc != 0 {
		return statusError(hipsys.Status(rc))
	}
	return nil
}

// poolThreads is how many OS threads a large launch runs on (the pool plus the caller).
func poolThreads() int { return int(C.cubehip_pool_threads()) }

func statusError(s hipsys.Status) error {
	switch s {
	case hipsys.ErrorOutOfMemory:
		return hipsys.NewError("cpu", callLaunch, s, "cannot map fiber stacks or a shared-memory arena for the launch")
	case hipsys.ErrorCooperativeLaunchTooLarge:
		return hipsys.NewError("cpu", callLaunchCooperative, s, "cannot start an OS thread for every block of the cooperative grid")
	default:
		return hipsys.NewError("cpu", callLaunch, s, "")
	}
}
