package nvidia

/*
#include "cu.h"

static CUresult cu_init(void) { return CUFN(init, unsigned)(0); }
static CUresult cu_device_count(int* n) { return CUFN(deviceGetCount, int*)(n); }
static CUresult cu_retain(int ordinal) {
	CUdevice d;
	CUresult r = CUFN(deviceGet, CUdevice*, int)(&d, ordinal);
	if (r) return r;
	return CUFN(primaryCtxRetain, CUcontext*, CUdevice)(&cubehip_primary[ordinal], d);
}
*/
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
	functions hotHandles[hipsys.Module]
	graphs    handles[*graph]
	nodes     handles[hipsys.Graph]
	execs     hotHandles[struct{}]
	programs  handles[*program]
	hosts     ranges

	queueMu sync.Mutex
	queues  map[int]*launchQueue // each device's launch queue, made on first use

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
	if err := lib.Resolve(driverSymbols()); err != nil {
		return nil, fmt.Errorf("nvidia: %s is too old for cubehip (CUDA 11.4 or newer is needed): %w", lib.Name, err)
	}
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
	return &Platform{lib: lib, ndev: ndev, props: map[int]hipsys.DeviceProps{}}, nil
}

// driverSymbols lists each entry point with its versioned name first: cuda.h maps the
// plain names to the _v2 forms, and dlsym sees only what the library exports.
func driverSymbols() []dl.Entry {
	f := &C.cubehip_cu
	e := func(addr *unsafe.Pointer, names ...string) dl.Entry { return dl.Entry{Names: names, Addr: addr} }
	return []dl.Entry{
		e(&f.init, "cuInit"),
		e(&f.deviceGetCount, "cuDeviceGetCount"),
		e(&f.deviceGet, "cuDeviceGet"),
		e(&f.deviceGetName, "cuDeviceGetName"),
		e(&f.deviceGetAttribute, "cuDeviceGetAttribute"),
		e(&f.deviceTotalMem, "cuDeviceTotalMem_v2"),
		e(&f.primaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		e(&f.ctxSetCurrent, "cuCtxSetCurrent"),
		e(&f.ctxSynchronize, "cuCtxSynchronize"),
		e(&f.memGetInfo, "cuMemGetInfo_v2"),
		e(&f.memAlloc, "cuMemAlloc_v2"),
		e(&f.memFree, "cuMemFree_v2"),
		e(&f.memHostAlloc, "cuMemHostAlloc"),
		e(&f.memFreeHost, "cuMemFreeHost"),
		e(&f.memsetD8, "cuMemsetD8_v2"),
		e(&f.memsetD8Async, "cuMemsetD8Async"),
		e(&f.memcpyHtoD, "cuMemcpyHtoD_v2"),
		e(&f.memcpyDtoH, "cuMemcpyDtoH_v2"),
		e(&f.memcpyDtoD, "cuMemcpyDtoD_v2"),
		e(&f.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		e(&f.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		e(&f.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		e(&f.memcpy2D, "cuMemcpy2D_v2"),
		e(&f.memcpy2DAsync, "cuMemcpy2DAsync_v2"),
		e(&f.streamCreate, "cuStreamCreate"),
		e(&f.streamQuery, "cuStreamQuery"),
		e(&f.streamSynchronize, "cuStreamSynchronize"),
		e(&f.streamWaitEvent, "cuStreamWaitEvent"),
		e(&f.streamDestroy, "cuStreamDestroy_v2"),
		e(&f.eventCreate, "cuEventCreate"),
		e(&f.eventRecord, "cuEventRecord"),
		e(&f.eventQuery, "cuEventQuery"),
		e(&f.eventSynchronize, "cuEventSynchronize"),
		// CUDA 12.8 added _v2 (same arguments, defined for events recorded in graphs);
		// CUDA 13 keeps only that name behind the plain one.
		e(&f.eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		e(&f.eventDestroy, "cuEventDestroy_v2"),
		e(&f.moduleLoadData, "cuModuleLoadData"),
		e(&f.moduleGetFunction, "cuModuleGetFunction"),
		e(&f.moduleUnload, "cuModuleUnload"),
		e(&f.launchKernel, "cuLaunchKernel"),
		e(&f.streamBeginCapture, "cuStreamBeginCapture_v2"),
		e(&f.streamEndCapture, "cuStreamEndCapture"),
		e(&f.streamIsCapturing, "cuStreamIsCapturing"),
		e(&f.graphGetNodes, "cuGraphGetNodes"),
		e(&f.graphNodeGetType, "cuGraphNodeGetType"),
		e(&f.graphInstantiate, "cuGraphInstantiateWithFlags"),
		e(&f.graphUpload, "cuGraphUpload"),
		e(&f.graphLaunch, "cuGraphLaunch"),
		e(&f.graphExecDestroy, "cuGraphExecDestroy"),
		e(&f.graphDestroy, "cuGraphDestroy"),
	}
}

// Name is "nvidia".
func (p *Platform) Name() string { return platformName }
