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
	cModuleUnload
	cFuncGetParams
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
	cRTCCompileProgram
	cRTCGetProgramLog
	cRTCGetCode
	cRTCDestroyProgram

	cDeviceCanAccessPeer
	cDeviceEnablePeerAccess
	cMemcpyPeerAsync

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

	"StreamBeginCapture": cStreamBeginCapture, "StreamEndCapture": cStreamEndCapture,
	"StreamIsCapturing": cStreamIsCapturing, "GraphGetNodes": cGraphGetNodes,
	"GraphNodeGetType": cGraphNodeGetType, "GraphInstantiate": cGraphInstantiate,
	"GraphUpload": cGraphUpload, "GraphLaunch": cGraphLaunch,
	"GraphExecDestroy": cGraphExecDestroy, "GraphDestroy": cGraphDestroy,

	"RTCCreateProgram": cRTCCreateProgram, "RTCCompileProgram": cRTCCompileProgram,
	"RTCGetProgramLog": cRTCGetProgramLog, "RTCGetCode": cRTCGetCode,
	"RTCDestroyProgram": cRTCDestroyProgram,

	"DeviceCanAccessPeer": cDeviceCanAccessPeer, "DeviceEnablePeerAccess": cDeviceEnablePeerAccess,
	"MemcpyPeerAsync": cMemcpyPeerAsync,
}

// names is each call's C name, and byName its inverse; both are read-only once built.
var names, byName = buildNames()

func buildNames() ([numCalls]string, map[string]call) {
	var ns [numCalls]string
	inv := make(map[string]call, len(methods))
	for m, c := range methods {
		n := "hip" + m
		if len(m) > 3 && m[:3] == "RTC" {
			n = "hiprtc" + m[3:] // RTCCompileProgram → hiprtcCompileProgram
		}
		ns[c] = n
		inv[n] = c
	}
	return ns, inv
}

// Names lists the C name of every call the wrapper can fail, in the interface's order.
func Names() []string {
	out := make([]string, numCalls)
	copy(out, names[:])
	return out
}
