package faults

// call indexes one HIP call: the counters are an array indexed by it, so counting a call
// takes no lock and no map lookup on the hot path.
type call int

const (
	cGetDeviceCount call = iota
	cGetDeviceProperties
	cSetDevice
	cGetDevice
	cDeviceSynchronize
	cMemGetInfo

	cMalloc
	cFree
	cHostMalloc
	cHostFree
	cMemset
	cMemsetAsync
	cMemcpyHtoD
	cMemcpyDtoH
	cMemcpyDtoD
	cMemcpyHtoDAsync
	cMemcpyDtoHAsync
	cMemcpyDtoDAsync
	cMemcpy2D
	cMemcpy2DAsync
	cImportMemory
	cReleaseImportedMemory

	cStreamCreateWithFlags
	cStreamQuery
	cStreamSynchronize
	cStreamWaitEvent
	cStreamDestroy

	cEventCreateWithFlags
	cEventRecord
	cEventQuery
	cEventSynchronize
	cEventElapsedTime
	cEventDestroy

	cModuleLoadData
	cModuleGetFunction
	cModuleLaunchKernel
	cModuleLaunchCooperativeKernel
	cModuleOccupancyMaxActiveBlocksPerMultiprocessor
	cModuleUnload
	cFuncGetParams
	cFuncGetAttribute
	cFuncSetAttribute
	cModuleGetGlobal

	cStreamBeginCapture
	cStreamEndCapture
	cStreamIsCapturing
	cGraphGetNodes
	cGraphNodeGetType
	cGraphInstantiate
	cGraphUpload
	cGraphLaunch
	cGraphExecDestroy
	cGraphDestroy

	cRTCCreateProgram
	cRTCAddNameExpression
	cRTCCompileProgram
	cRTCGetProgramLog
	cRTCGetCode
	cRTCGetLoweredName
	cRTCDestroyProgram

	cDeviceCanAccessPeer
	cDeviceEnablePeerAccess
	cMemcpyPeerAsync

	// The optional capabilities' calls (capabilities.go, queue.go), after the Platform's.
	cOpenLaunchQueue
	cModuleLaunchKernelFlagged
	cMemcpyDtoHAsyncFlagged
	cStreamWaitFlag

	numCalls
)

// methods maps each hipsys.Platform method (Name aside, which is no HIP call) to its
// call. The C name is derived from it below rather than written twice, so the two can
// never disagree; names_test.go checks this table against the interface's method set,
// so a method added to hipsys.Platform without a row here fails the build's tests.
var methods = map[string]call{
	"GetDeviceCount": cGetDeviceCount, "GetDeviceProperties": cGetDeviceProperties,
	"SetDevice": cSetDevice, "GetDevice": cGetDevice,
	"DeviceSynchronize": cDeviceSynchronize, "MemGetInfo": cMemGetInfo,

	"Malloc": cMalloc, "Free": cFree, "HostMalloc": cHostMalloc, "HostFree": cHostFree,
	"Memset": cMemset, "MemsetAsync": cMemsetAsync,
	"MemcpyHtoD": cMemcpyHtoD, "MemcpyDtoH": cMemcpyDtoH, "MemcpyDtoD": cMemcpyDtoD,
	"MemcpyHtoDAsync": cMemcpyHtoDAsync, "MemcpyDtoHAsync": cMemcpyDtoHAsync,
	"MemcpyDtoDAsync": cMemcpyDtoDAsync, "Memcpy2D": cMemcpy2D, "Memcpy2DAsync": cMemcpy2DAsync,
	"ImportMemory": cImportMemory, "ReleaseImportedMemory": cReleaseImportedMemory,

	"StreamCreateWithFlags": cStreamCreateWithFlags, "StreamQuery": cStreamQuery,
	"StreamSynchronize": cStreamSynchronize, "StreamWaitEvent": cStreamWaitEvent,
	"StreamDestroy": cStreamDestroy,

	"EventCreateWithFlags": cEventCreateWithFlags, "EventRecord": cEventRecord,
	"EventQuery": cEventQuery, "EventSynchronize": cEventSynchronize,
	"EventElapsedTime": cEventElapsedTime, "EventDestroy": cEventDestroy,

	"ModuleLoadData": cModuleLoadData, "ModuleGetFunction": cModuleGetFunction, "FuncGetParams": cFuncGetParams,
	"ModuleGetGlobal":    cModuleGetGlobal,
	"ModuleLaunchKernel": cModuleLaunchKernel, "ModuleUnload": cModuleUnload,
	"ModuleLaunchCooperativeKernel":                   cModuleLaunchCooperativeKernel,
	"ModuleOccupancyMaxActiveBlocksPerMultiprocessor": cModuleOccupancyMaxActiveBlocksPerMultiprocessor,
	"FuncGetAttribute":                                cFuncGetAttribute, "FuncSetAttribute": cFuncSetAttribute,

	"StreamBeginCapture": cStreamBeginCapture, "StreamEndCapture": cStreamEndCapture,
	"StreamIsCapturing": cStreamIsCapturing, "GraphGetNodes": cGraphGetNodes,
	"GraphNodeGetType": cGraphNodeGetType, "GraphInstantiate": cGraphInstantiate,
	"GraphUpload": cGraphUpload, "GraphLaunch": cGraphLaunch,
	"GraphExecDestroy": cGraphExecDestroy, "GraphDestroy": cGraphDestroy,

	"RTCCreateProgram": cRTCCreateProgram, "RTCAddNameExpression": cRTCAddNameExpression,
	"RTCCompileProgram": cRTCCompileProgram,
	"RTCGetProgramLog":  cRTCGetProgramLog, "RTCGetCode": cRTCGetCode,
	"RTCGetLoweredName": cRTCGetLoweredName, "RTCDestroyProgram": cRTCDestroyProgram,

	"DeviceCanAccessPeer": cDeviceCanAccessPeer, "DeviceEnablePeerAccess": cDeviceEnablePeerAccess,
	"MemcpyPeerAsync": cMemcpyPeerAsync,
}

// capabilityCalls names the calls of the optional capabilities, which have no method of
// hipsys.Platform to derive a name from. hipOpenLaunchQueue is the name the platforms
// already give its errors. The flagged calls are variants of Platform calls (variantOf)
// and are named after them, so that a test can fail the flagged path alone.
var capabilityCalls = map[call]string{
	cOpenLaunchQueue:           "hipOpenLaunchQueue",
	cModuleLaunchKernelFlagged: "hipModuleLaunchKernelFlagged",
	cMemcpyDtoHAsyncFlagged:    "hipMemcpyDtoHAsyncFlagged",
	cStreamWaitFlag:            "hipStreamWaitFlag",
}

// variantOf is the Platform call each flagged call is a variant of: a flagged launch is a
// launch, a flag's wait a stream's wait. It also counts as that call, and that call's rule
// fails it too (Platform.checkVariant), so a test written before flags existed (failing
// every launch, or counting the waits of a loop) means the same where the platform has
// them; the platforms name its errors after that call as well.
var variantOf = map[call]call{
	cModuleLaunchKernelFlagged: cModuleLaunchKernel,
	cMemcpyDtoHAsyncFlagged:    cMemcpyDtoHAsync,
	cStreamWaitFlag:            cStreamSynchronize,
}

// bases is variantOf as an array, read by every flagged call: no map lookup on that path.
var bases = func() (b [numCalls]call) {
	for v, base := range variantOf {
		b[v] = base
	}
	return b
}()

// names is each call's C name, and byName its inverse; both are read-only once built.
var names, byName = buildNames()

func buildNames() ([numCalls]string, map[string]call) {
	var ns [numCalls]string
	inv := make(map[string]call, numCalls)
	for m, c := range methods {
		n := "hip" + m
		if len(m) > 3 && m[:3] == "RTC" {
			n = "hiprtc" + m[3:] // RTCCompileProgram → hiprtcCompileProgram
		}
		ns[c] = n
		inv[n] = c
	}
	for c, n := range capabilityCalls {
		ns[c] = n
		inv[n] = c
	}
	return ns, inv
}

// Names lists the C name of every call the wrapper can fail: hipsys.Platform's in the
// interface's order, then those of the optional capabilities.
func Names() []string {
	out := make([]string, numCalls)
	copy(out, names[:])
	return out
}
