package amd

import (
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// syms holds the address of every HIP call the platform makes, resolved once when the
// library opens. Where ROCm renamed a call, the newer name is tried first, and propsLayout
// records which hipDeviceProp_t the resolved hipGetDeviceProperties fills.
type syms struct {
	runtimeGetVersion, driverGetVersion                                    unsafe.Pointer
	getDeviceCount, getDeviceProperties, deviceGetAttribute, deviceGetName unsafe.Pointer
	deviceTotalMem, setDevice, getDevice, deviceSynchronize, memGetInfo    unsafe.Pointer

	malloc, free, hostMalloc, hostFree, memsetD8, memsetD8Async unsafe.Pointer
	memcpyHtoD, memcpyDtoH, memcpyDtoD                          unsafe.Pointer
	memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoDAsync           unsafe.Pointer
	memcpy2D, memcpy2DAsync                                     unsafe.Pointer

	streamCreateWithFlags, streamQuery, streamSynchronize, streamWaitEvent, streamDestroy unsafe.Pointer
	eventCreateWithFlags, eventRecord, eventQuery, eventSynchronize, eventElapsedTime     unsafe.Pointer
	eventDestroy                                                                          unsafe.Pointer

	moduleLoadData, moduleGetFunction, moduleLaunchKernel, moduleUnload, moduleGetGlobal unsafe.Pointer
	moduleOccupancy                                                                      unsafe.Pointer
	moduleLaunchCooperative                                                              unsafe.Pointer // optional: absent from older ROCm (5.2)
	funcGetAttribute                                                                     unsafe.Pointer // optional: a library without it answers hipErrorNotSupported

	streamBeginCapture, streamEndCapture, streamIsCapturing, graphGetNodes, graphNodeGetType unsafe.Pointer
	graphInstantiate, graphLaunch, graphExecDestroy, graphDestroy                            unsafe.Pointer
	graphUpload                                                                              unsafe.Pointer // optional: absent before ROCm 5.3

	deviceCanAccessPeer, deviceEnablePeerAccess, memcpyPeerAsync unsafe.Pointer

	// Optional: ImportMemory checks what the runtime says of a pointer where it can.
	pointerGetAttributes, memGetAddressRange unsafe.Pointer

	propsLayout layout
}

// required lists the HIP calls without which the platform cannot work: a library that
// lacks any of them is the wrong library, and Open names every missing one at once.
func (s *syms) required() []dl.Entry {
	e := func(p *unsafe.Pointer, names ...string) dl.Entry { return dl.Entry{Names: names, Addr: p} }
	return []dl.Entry{
		e(&s.runtimeGetVersion, "hipRuntimeGetVersion"), e(&s.driverGetVersion, "hipDriverGetVersion"),
		e(&s.getDeviceCount, "hipGetDeviceCount"),
		// ROCm 6.0 changed hipDeviceProp_t and kept the old layout under the old name;
		// the R0600 entry point is the one whose layout propsR0600 describes.
		e(&s.getDeviceProperties, "hipGetDevicePropertiesR0600", "hipGetDeviceProperties"),
		e(&s.deviceGetAttribute, "hipDeviceGetAttribute"), e(&s.deviceGetName, "hipDeviceGetName"),
		e(&s.deviceTotalMem, "hipDeviceTotalMem"), e(&s.setDevice, "hipSetDevice"), e(&s.getDevice, "hipGetDevice"),
		e(&s.deviceSynchronize, "hipDeviceSynchronize"), e(&s.memGetInfo, "hipMemGetInfo"),

		e(&s.malloc, "hipMalloc"), e(&s.free, "hipFree"), e(&s.hostMalloc, "hipHostMalloc"),
		e(&s.hostFree, "hipHostFree", "hipFreeHost"), e(&s.memsetD8, "hipMemsetD8"),
		e(&s.memsetD8Async, "hipMemsetD8Async"),
		e(&s.memcpyHtoD, "hipMemcpyHtoD"), e(&s.memcpyDtoH, "hipMemcpyDtoH"), e(&s.memcpyDtoD, "hipMemcpyDtoD"),
		e(&s.memcpyHtoDAsync, "hipMemcpyHtoDAsync"), e(&s.memcpyDtoHAsync, "hipMemcpyDtoHAsync"),
		e(&s.memcpyDtoDAsync, "hipMemcpyDtoDAsync"),
		e(&s.memcpy2D, "hipMemcpy2D"), e(&s.memcpy2DAsync, "hipMemcpy2DAsync"),

		e(&s.streamCreateWithFlags, "hipStreamCreateWithFlags"), e(&s.streamQuery, "hipStreamQuery"),
		e(&s.streamSynchronize, "hipStreamSynchronize"), e(&s.streamWaitEvent, "hipStreamWaitEvent"),
		e(&s.streamDestroy, "hipStreamDestroy"),
		e(&s.eventCreateWithFlags, "hipEventCreateWithFlags"), e(&s.eventRecord, "hipEventRecord"),
		e(&s.eventQuery, "hipEventQuery"), e(&s.eventSynchronize, "hipEventSynchronize"),
		e(&s.eventElapsedTime, "hipEventElapsedTime"), e(&s.eventDestroy, "hipEventDestroy"),

		e(&s.moduleLoadData, "hipModuleLoadData"), e(&s.moduleGetFunction, "hipModuleGetFunction"),
		e(&s.moduleLaunchKernel, "hipModuleLaunchKernel"), e(&s.moduleUnload, "hipModuleUnload"),
		e(&s.moduleGetGlobal, "hipModuleGetGlobal"),
		e(&s.moduleOccupancy, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"),

		e(&s.streamBeginCapture, "hipStreamBeginCapture"), e(&s.streamEndCapture, "hipStreamEndCapture"),
		e(&s.streamIsCapturing, "hipStreamIsCapturing"), e(&s.graphGetNodes, "hipGraphGetNodes"),
		e(&s.graphNodeGetType, "hipGraphNodeGetType"), e(&s.graphInstantiate, "hipGraphInstantiate"),
		e(&s.graphLaunch, "hipGraphLaunch"), e(&s.graphExecDestroy, "hipGraphExecDestroy"),
		e(&s.graphDestroy, "hipGraphDestroy"),

		e(&s.deviceCanAccessPeer, "hipDeviceCanAccessPeer"),
		e(&s.deviceEnablePeerAccess, "hipDeviceEnablePeerAccess"),
		e(&s.memcpyPeerAsync, "hipMemcpyPeerAsync"),
	}
}

// resolve fills the table from lib, optional symbols included.
func (s *syms) resolve(lib *dl.Library) error {
	if err := lib.Resolve(s.required()); err != nil {
		return err
	}
	s.graphUpload = lib.Lookup("hipGraphUpload")
	s.funcGetAttribute = lib.Lookup("hipFuncGetAttribute")
	s.moduleLaunchCooperative = lib.Lookup("hipModuleLaunchCooperativeKernel")
	s.pointerGetAttributes = lib.Lookup("hipPointerGetAttributes")
	s.memGetAddressRange = lib.Lookup("hipMemGetAddressRange")
	s.propsLayout = propsR0000
	if lib.Lookup("hipGetDevicePropertiesR0600") != nil {
		s.propsLayout = propsR0600
	}
	return nil
}

// rtcSyms are hiprtc's calls: in libhiprtc.so from ROCm 6.0 on, in libamdhip64 before.
type rtcSyms struct {
	lib                          string // the library they came from
	path                         string // its file, as the loader names it ("" when it cannot say)
	major, minor                 int    // hiprtcVersion; -1 where the library has no such call
	create, compile, destroy     unsafe.Pointer
	logSize, log, codeSize, code unsafe.Pointer
	// Name expressions: looked up, not required (identify), so that a hiprtc without them
	// still compiles; the calls that need them say they are missing.
	addName, lowered unsafe.Pointer
}

func (r *rtcSyms) entries() []dl.Entry {
	e := func(p *unsafe.Pointer, name string) dl.Entry { return dl.Entry{Names: []string{name}, Addr: p} }
	return []dl.Entry{
		e(&r.create, "hiprtcCreateProgram"), e(&r.compile, "hiprtcCompileProgram"),
		e(&r.destroy, "hiprtcDestroyProgram"), e(&r.logSize, "hiprtcGetProgramLogSize"),
		e(&r.log, "hiprtcGetProgramLog"), e(&r.codeSize, "hiprtcGetCodeSize"), e(&r.code, "hiprtcGetCode"),
	}
}
