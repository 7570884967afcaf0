package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

const platformName = "nvidia"

func init() { hipsys.Register(platformName, Open) }

// cudaLibrary is the driver's soname; the unversioned libcuda.so is a development link
// that a runtime-only machine lacks, so it is not tried.
const cudaLibrary = "libcuda.so.1"

// Platform is HIP's NVIDIA mapping on the CUDA driver API. One exists per process (the
// driver is process-wide); it is safe for concurrent use.
//
// Contexts: Open retains every device's primary context (the one the CUDA runtime uses
// too). As in HIP, the current device belongs to the calling OS thread (0 until
// SetDevice); every call that needs a context makes that device's primary context current
// first, through a per-thread cache in C, so cuCtxSetCurrent is paid only when a
// goroutine lands on a thread whose context differs. Code that switches contexts behind
// cubehip's back on the same thread defeats the cache.
//
// hiprtc: programs get an in-memory <hip/hip_runtime.h> (and hip_fp16.h, hip_bf16.h) so
// unmodified HIP kernel source compiles: HIP's spellings (hipThreadIdx_x,
// HIP_DYNAMIC_SHARED, unmasked __shfl*, __ballot, __any, __all) map to CUDA's. Code is
// built as CUBIN for the device's own SM (sm_90 on an H200), or as PTX for the newest
// architecture NVRTC knows when NVRTC is older than the device. HIP-on-AMD options that
// mean nothing here (--offload-arch, -O3, -mwavefrontsize64, ...) are dropped. NVRTC has
// no cuda_fp16.h of its own: hip_fp16.h and hip_bf16.h need the toolkit's include folder
// ($CUDA_HOME, $CUDA_PATH or /usr/local/cuda), added to the options when it exists.
//
// Handles: a hipsys handle is the driver's own pointer. Live handles are kept in tables
// and checked on the way in, because the driver dereferences what it is given: a stale
// or invented handle is hipErrorInvalidHandle, not a crash. Pinned host allocations are
// tracked the same way, so an async copy outside one is hipErrorInvalidValue. Device
// addresses are checked by the driver itself.
//
// Capture: CUDA ends a capture begun in global or thread-local mode only on the OS thread
// that began it (hipErrorStreamCaptureWrongThread otherwise), so a goroutine capturing in
// those modes locks its OS thread from StreamBeginCapture to StreamEndCapture; relaxed
// mode has no such tie.
//
// Kernel parameters: ModuleGetFunction asks the driver's cuFuncGetParamInfo (CUDA 12.4
// and later) for the function's parameters, which gives each one's offset and size and
// nothing more (Kind ParamUnknown); FuncGetParams returns them, and every launch,
// direct or queued, compares its arguments' number and sizes with them first
// (hipsys.CheckArgs), since cuLaunchKernel reads one argument pointer per parameter and
// a short list crashes the process. With an older driver FuncGetParams is
// hipErrorNotSupported, and launches are compared with the parameter sizes the module's
// image declares (a CUBIN's .nv.info records, a PTX .entry's list: imageparams.go),
// where it can be read.
//
// The launch queue (hipsys.LaunchQueuer): OpenLaunchQueue(device) holds the device's
// ring of 256 launch descriptors (queue.h), which Go fills without a cgo call and a C
// thread of the queue's own empties into cuLaunchKernel. When a launch takes it:
//
//   - directly, on the caller's thread, when the ring is empty, every refusal has been
//     returned and the launch starts a run (the first handoffRun launches after any
//     other call: a launch-then-sync caller never wakes the thread) or the thread is
//     parked; a launch that continues a loop (launches within handoffGap of each other)
//     also kicks the parked thread awake, and goes on directly until it runs;
//   - queued otherwise, the thread then issuing the launches in order while the
//     caller's Go work overlaps the driver's;
//   - directly after the queue is drained, when its arguments do not fit a slot (more
//     than 16 arguments or 176 bytes of them).
//
// Every trampoline settles the queue of the calling thread's current device first
// (cubehip_q_settle, in trampolines.c's ENSURE): a call that follows a queued launch in
// the program follows it in the driver, on any thread. A producer that fills the ring
// sleeps until half of it is free (refillFree); the thread spins 100 µs after its last
// launch, then parks. A queued launch's refusal comes back later, numbered (hipsys's
// queue.go states the contract); each tuned constant's comment gives the measurement or
// the reasoning behind it.
//
// Completion flags (hipsys.FlaggingQueue, hipsys.FlagWaiter; streamflag.go): each stream
// made with StreamCreateWithFlags gets a word of mapped pinned memory. LaunchFlagged
// follows a launch it issues directly with cuStreamWriteValue32 of the word's next value,
// in the same cgo call (not on a capturing stream), and StreamWaitFlag spins on the word
// for up to 100 µs, then waits with cuStreamSynchronize, which also reports a fault (a
// faulted context never writes the word). CUBEHIP_NVIDIA_STREAM_FLAGS=0 turns them off.
type Platform struct {
	lib  *dl.Library
	ndev int

	propsMu sync.Mutex
	props   map[int]hipsys.DeviceProps

	streams   hotHandles[struct{}]
	events    handles[struct{}]
	modules   handles[*module]
	functions funcTable
	graphs    handles[*graph]
	nodes     handles[hipsys.Graph]
	execs     hotHandles[struct{}]
	programs  handles[*program]
	hosts     ranges

	importsMu sync.Mutex
	imports   map[[2]uint64]int // ImportMemory's ranges (ptr, size), each with its count

	// Functions opted in to more than 48 KiB of dynamic shared memory, with the limit
	// each got (sharedoptin.go); a function leaves with its module.
	optedIn sync.Map // uintptr -> uint32

	queueMu sync.Mutex
	queues  map[int]*launchQueue // each device's launch queue, made on first use

	// Each created stream's completion flag (streamflag.go), and the flags of destroyed
	// streams, per device, for the next streams to take. noFlags: the driver lacks the
	// entries, or EnvStreamFlags turned them off.
	flags    handles[streamFlag]
	flagMu   sync.Mutex
	flagPool map[int][]C.uintptr_t
	noFlags  bool

	rtcOnce sync.Once
	rtc     *nvrtcLib
	rtcErr  error
}

var _ hipsys.Platform = (*Platform)(nil)

var (
	openOnce sync.Once
	opened   *Platform
	openErr  error
)

// Open loads libcuda.so.1, initializes the driver and retains every device's primary
// context (the context HIP on NVIDIA uses, shared with any CUDA runtime code in the
// process). NVRTC is loaded on the first hiprtc call, so a machine with a driver and no
// toolkit can still load precompiled code. Open fails with an error naming libcuda.so.1
// when the driver is absent, which is how auto moves on to the next platform.
func Open() (hipsys.Platform, error) {
	openOnce.Do(func() { opened, openErr = open() })
	if openErr != nil {
		return nil, openErr
	}
	return opened, nil
}

func open() (*Platform, error) {
	lib, err := dl.Open(cudaLibrary)
	if err != nil {
		return nil, fmt.Errorf("nvidia: %w", err)
	}
	if err := lib.Resolve(append(driverSymbols(), peerSymbols()...)); err != nil {
		return nil, fmt.Errorf("nvidia: %s is too old for cubehip (CUDA 11.4 or newer is needed): %w", lib.Name, err)
	}
	// Optional (CUDA 12.4 and later): without it FuncGetParams is hipErrorNotSupported.
	*entryAddr(&C.cubehip_cu.funcGetParamInfo) = lib.Lookup("cuFuncGetParamInfo")
	// Optional: a stream's completion flag (streamflag.go) needs both.
	*entryAddr(&C.cubehip_cu.memHostGetDevicePointer) = lib.Lookup("cuMemHostGetDevicePointer_v2")
	*entryAddr(&C.cubehip_cu.streamWriteValue32) = lib.Lookup("cuStreamWriteValue32_v2")
	if err := cuError("hipInit", int32(C.cu_init())); err != nil {
		return nil, err
	}
	var n C.int
	if err := cuError("hipGetDeviceCount", int32(C.cu_device_count(&n))); err != nil {
		return nil, err
	}
	ndev := min(int(n), C.CUBEHIP_MAX_DEVICES)
	for d := range ndev {
		if err := cuError("hipSetDevice", int32(C.cu_retain(C.int(d)))); err != nil {
			return nil, err
		}
	}
	return &Platform{lib: lib, ndev: ndev, props: map[int]hipsys.DeviceProps{}, noFlags: flagsOff()}, nil
}

// driverSymbols lists each entry point with its versioned name first: cuda.h maps the
// plain names to the _v2 forms, and dlsym sees only what the library exports.
func driverSymbols() []dl.Entry {
	f := &C.cubehip_cu
	return []dl.Entry{
		entry(&f.init, "cuInit"),
		entry(&f.deviceGetCount, "cuDeviceGetCount"),
		entry(&f.deviceGet, "cuDeviceGet"),
		entry(&f.deviceGetName, "cuDeviceGetName"),
		entry(&f.deviceGetAttribute, "cuDeviceGetAttribute"),
		entry(&f.deviceTotalMem, "cuDeviceTotalMem_v2"),
		entry(&f.primaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		entry(&f.ctxSetCurrent, "cuCtxSetCurrent"),
		entry(&f.ctxSynchronize, "cuCtxSynchronize"),
		entry(&f.memGetInfo, "cuMemGetInfo_v2"),
		entry(&f.memAlloc, "cuMemAlloc_v2"),
		entry(&f.memFree, "cuMemFree_v2"),
		entry(&f.memHostAlloc, "cuMemHostAlloc"),
		entry(&f.memFreeHost, "cuMemFreeHost"),
		entry(&f.memsetD8, "cuMemsetD8_v2"),
		entry(&f.memsetD8Async, "cuMemsetD8Async"),
		entry(&f.memcpyHtoD, "cuMemcpyHtoD_v2"),
		entry(&f.memcpyDtoH, "cuMemcpyDtoH_v2"),
		entry(&f.memcpyDtoD, "cuMemcpyDtoD_v2"),
		entry(&f.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		entry(&f.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		entry(&f.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		entry(&f.memcpy2D, "cuMemcpy2D_v2"),
		entry(&f.memcpy2DAsync, "cuMemcpy2DAsync_v2"),
		entry(&f.streamCreate, "cuStreamCreate"),
		entry(&f.streamQuery, "cuStreamQuery"),
		entry(&f.streamSynchronize, "cuStreamSynchronize"),
		entry(&f.streamWaitEvent, "cuStreamWaitEvent"),
		entry(&f.streamDestroy, "cuStreamDestroy_v2"),
		entry(&f.eventCreate, "cuEventCreate"),
		entry(&f.eventRecord, "cuEventRecord"),
		entry(&f.eventQuery, "cuEventQuery"),
		entry(&f.eventSynchronize, "cuEventSynchronize"),
		// CUDA 12.8 added _v2 (same arguments, defined for events recorded in graphs);
		// CUDA 13 keeps only that name behind the plain one.
		entry(&f.eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		entry(&f.eventDestroy, "cuEventDestroy_v2"),
		entry(&f.moduleLoadData, "cuModuleLoadData"),
		entry(&f.moduleGetFunction, "cuModuleGetFunction"),
		entry(&f.moduleUnload, "cuModuleUnload"),
		entry(&f.moduleGetGlobal, "cuModuleGetGlobal_v2"),
		entry(&f.funcGetAttribute, "cuFuncGetAttribute"),
		entry(&f.funcSetAttribute, "cuFuncSetAttribute"),
		entry(&f.launchKernel, "cuLaunchKernel"),
		entry(&f.launchCooperativeKernel, "cuLaunchCooperativeKernel"),
		entry(&f.occupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
		entry(&f.streamBeginCapture, "cuStreamBeginCapture_v2"),
		entry(&f.streamEndCapture, "cuStreamEndCapture"),
		entry(&f.streamIsCapturing, "cuStreamIsCapturing"),
		entry(&f.graphGetNodes, "cuGraphGetNodes"),
		entry(&f.graphNodeGetType, "cuGraphNodeGetType"),
		entry(&f.graphInstantiate, "cuGraphInstantiateWithFlags"),
		entry(&f.graphUpload, "cuGraphUpload"),
		entry(&f.graphLaunch, "cuGraphLaunch"),
		entry(&f.graphExecDestroy, "cuGraphExecDestroy"),
		entry(&f.graphDestroy, "cuGraphDestroy"),
		entry(&f.pointerGetAttributes, "cuPointerGetAttributes"),
	}
}

// entryAddr is where dl stores a symbol's address: a field of a C function-pointer type
// (which cgo types as *[0]byte) holds the address as an unsafe.Pointer would.
func entryAddr[T ~*[0]byte](field *T) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Pointer(field))
}

// entry is the dl.Entry that resolves the first of names into field.
func entry[T ~*[0]byte](field *T, names ...string) dl.Entry {
	return dl.Entry{Names: names, Addr: entryAddr(field)}
}

// Name is "nvidia".
func (p *Platform) Name() string { return platformName }
