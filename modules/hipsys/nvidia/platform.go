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
