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
	MaxSharedMemPerBlock = C.CUBEHIP_MAX_SHARED      // dynamic shared bytes per block
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
	errShared   = hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidValue, "dynamic shared memory over 65536 bytes per block")
	errParams   = hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidValue, "kernel argument block over 4096 bytes or an argument past its end")
	errUnloaded = hipsys.NewError("cpu", callLaunch, hipsys.ErrorInvalidHandle, "function of an unloaded module")
)

// Function is one kernel entry of a loaded Module.
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
// hipErrorInvalidValue for dynamic shared memory over MaxSharedMemPerBlock or arguments
// that do not match the kernel's, hipErrorInvalidHandle once the module is closed. A
// kernel that faults ends the launch with the error a GPU gives, naming the kernel
// (fault.go): hipErrorIllegalAddress for a bad memory access, hipErrorLaunchFailure for
// the others.
func (f *Function) Launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error {
	return f.launch(grid, block, sharedMem, params, offsets, false)
}

// LaunchCooperative is Launch with every block of the grid running at once, each on an
// OS thread of its own, so that the kernel's grid-wide barrier (cooperative groups'
// this_grid().sync()) is reached by every block; grid_group::is_valid() is true in it.
// A grid over CooperativeLimit(block, sharedMem) blocks is hipErrorCooperativeLaunchTooLarge
// naming the limit, and nothing runs; so is a grid whose threads cannot all be started.
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
	if sharedMem > MaxSharedMemPerBlock {
		return errShared
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
	var fault C.cubehip_fault
	// SAFETY: params and offsets are Go memory holding no Go pointers; cubehip_run copies
	// them before running any block and keeps nothing after it returns (noescape). fault
	// is written before it returns and holds no pointer.
	rc := C.cubehip_run(f.run, buf, C.uint32_t(len(params)), offs, C.uint32_t(len(offsets)),
		C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z),
		C.uint32_t(block.X), C.uint32_t(block.Y), C.uint32_t(block.Z), C.uint32_t(sharedMem), barrier, cooperative, &fault)
	m.users.Add(-1)
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
		return hipsys.NewError("cpu", callLaunch, s, "cannot map fiber stacks for a barrier kernel")
	case hipsys.ErrorCooperativeLaunchTooLarge:
		return hipsys.NewError("cpu", callLaunchCooperative, s, "cannot start an OS thread for every block of the cooperative grid")
	default:
		return hipsys.NewError("cpu", callLaunch, s, "")
	}
}
