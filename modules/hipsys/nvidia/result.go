package nvidia

import (
	"strconv"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// cuResult is one row of HIP's hipCUResultTohipError (nvidia_hip_runtime_api.h): the
// CUresult's number, its cuda.h name (kept in the error's Detail, so a user can look the
// driver's own status up) and the hipError_t HIP maps it to. A CUresult HIP does not list
// becomes hipErrorUnknown, as in HIP; its name still reaches Detail.
type cuResult struct {
	code   int32
	name   string
	status hipsys.Status
}

var cuResults = []cuResult{
	{0, "CUDA_SUCCESS", hipsys.Success},
	{1, "CUDA_ERROR_INVALID_VALUE", hipsys.ErrorInvalidValue},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", hipsys.ErrorOutOfMemory},
	{3, "CUDA_ERROR_NOT_INITIALIZED", hipsys.ErrorNotInitialized},
	{4, "CUDA_ERROR_DEINITIALIZED", hipsys.ErrorDeinitialized},
	{5, "CUDA_ERROR_PROFILER_DISABLED", hipsys.ErrorProfilerDisabled},
	{6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", hipsys.ErrorProfilerNotInitialized},
	{7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", hipsys.ErrorProfilerAlreadyStarted},
	{8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", hipsys.ErrorProfilerAlreadyStopped},
	{34, "CUDA_ERROR_STUB_LIBRARY", hipsys.ErrorUnknown},
	{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", hipsys.ErrorUnknown},
	{100, "CUDA_ERROR_NO_DEVICE", hipsys.ErrorNoDevice},
	{101, "CUDA_ERROR_INVALID_DEVICE", hipsys.ErrorInvalidDevice},
	{102, "CUDA_ERROR_DEVICE_NOT_LICENSED", hipsys.ErrorUnknown},
	{200, "CUDA_ERROR_INVALID_IMAGE", hipsys.ErrorInvalidImage},
	{201, "CUDA_ERROR_INVALID_CONTEXT", hipsys.ErrorInvalidContext},
	{202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", hipsys.ErrorContextAlreadyCurrent},
	{205, "CUDA_ERROR_MAP_FAILED", hipsys.ErrorMapFailed},
	{206, "CUDA_ERROR_UNMAP_FAILED", hipsys.ErrorUnmapFailed},
	{207, "CUDA_ERROR_ARRAY_IS_MAPPED", hipsys.ErrorArrayIsMapped},
	{208, "CUDA_ERROR_ALREADY_MAPPED", hipsys.ErrorAlreadyMapped},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", hipsys.ErrorNoBinaryForGpu},
	{210, "CUDA_ERROR_ALREADY_ACQUIRED", hipsys.ErrorAlreadyAcquired},
	{211, "CUDA_ERROR_NOT_MAPPED", hipsys.ErrorNotMapped},
	{212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", hipsys.ErrorNotMappedAsArray},
	{213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", hipsys.ErrorNotMappedAsPointer},
	{214, "CUDA_ERROR_ECC_UNCORRECTABLE", hipsys.ErrorECCNotCorrectable},
	{215, "CUDA_ERROR_UNSUPPORTED_LIMIT", hipsys.ErrorUnsupportedLimit},
	{216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", hipsys.ErrorContextAlreadyInUse},
	{217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", hipsys.ErrorPeerAccessUnsupported},
	{218, "CUDA_ERROR_INVALID_PTX", hipsys.ErrorInvalidKernelFile},
	{219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", hipsys.ErrorInvalidGraphicsContext},
	{220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", hipsys.ErrorUnknown},
	{221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", hipsys.ErrorUnknown},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", hipsys.ErrorUnknown},
	{300, "CUDA_ERROR_INVALID_SOURCE", hipsys.ErrorInvalidSource},
	{301, "CUDA_ERROR_FILE_NOT_FOUND", hipsys.ErrorFileNotFound},
	{302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", hipsys.ErrorSharedObjectSymbolNotFound},
	{303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", hipsys.ErrorSharedObjectInitFailed},
	{304, "CUDA_ERROR_OPERATING_SYSTEM", hipsys.ErrorOperatingSystem},
	{400, "CUDA_ERROR_INVALID_HANDLE", hipsys.ErrorInvalidHandle},
	{401, "CUDA_ERROR_ILLEGAL_STATE", hipsys.ErrorIllegalState},
	{500, "CUDA_ERROR_NOT_FOUND", hipsys.ErrorNotFound},
	{600, "CUDA_ERROR_NOT_READY", hipsys.ErrorNotReady},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", hipsys.ErrorIllegalAddress},
	{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", hipsys.ErrorLaunchOutOfResources},
	{702, "CUDA_ERROR_LAUNCH_TIMEOUT", hipsys.ErrorLaunchTimeOut},
	{704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", hipsys.ErrorPeerAccessAlreadyEnabled},
	{705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", hipsys.ErrorPeerAccessNotEnabled},
	{708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", hipsys.ErrorSetOnActiveProcess},
	{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", hipsys.ErrorContextIsDestroyed},
	{710, "CUDA_ERROR_ASSERT", hipsys.ErrorAssert},
	{712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", hipsys.ErrorHostMemoryAlreadyRegistered},
	{713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", hipsys.ErrorHostMemoryNotRegistered},
	{714, "CUDA_ERROR_HARDWARE_STACK_ERROR", hipsys.ErrorUnknown},
	{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", hipsys.ErrorUnknown},
	{716, "CUDA_ERROR_MISALIGNED_ADDRESS", hipsys.ErrorUnknown},
	{717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", hipsys.ErrorUnknown},
	{718, "CUDA_ERROR_INVALID_PC", hipsys.ErrorUnknown},
	{719, "CUDA_ERROR_LAUNCH_FAILED", hipsys.ErrorLaunchFailure},
	{720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", hipsys.ErrorCooperativeLaunchTooLarge},
	{800, "CUDA_ERROR_NOT_PERMITTED", hipsys.ErrorUnknown},
	{801, "CUDA_ERROR_NOT_SUPPORTED", hipsys.ErrorNotSupported},
	{900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", hipsys.ErrorStreamCaptureUnsupported},
	{901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", hipsys.ErrorStreamCaptureInvalidated},
	{902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", hipsys.ErrorStreamCaptureMerge},
	{903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", hipsys.ErrorStreamCaptureUnmatched},
	{904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", hipsys.ErrorStreamCaptureUnjoined},
	{905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", hipsys.ErrorStreamCaptureIsolation},
	{906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", hipsys.ErrorStreamCaptureImplicit},
	{907, "CUDA_ERROR_CAPTURED_EVENT", hipsys.ErrorCapturedEvent},
	{908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", hipsys.ErrorStreamCaptureWrongThread},
	{909, "CUDA_ERROR_TIMEOUT", hipsys.ErrorUnknown},
	{910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", hipsys.ErrorGraphExecUpdateFailure},
	{999, "CUDA_ERROR_UNKNOWN", hipsys.ErrorUnknown},
}

var cuByCode = func() map[int32]cuResult {
	m := make(map[int32]cuResult, len(cuResults))
	for _, r := range cuResults {
		m[r.code] = r
	}
	return m
}()

// cuStatus is HIP's status for a CUresult and the driver's name for it.
func cuStatus(code int32) (hipsys.Status, string) {
	if r, ok := cuByCode[code]; ok {
		return r.status, r.name
	}
	return hipsys.ErrorUnknown, "CUresult(" + strconv.Itoa(int(code)) + ")"
}

// cuError is the *hipsys.Error of a failed driver call, nil for CUDA_SUCCESS. Detail
// carries the CUresult's name, because HIP's mapping folds several driver statuses into
// hipErrorUnknown and the name is what tells them apart.
func cuError(call string, code int32) error {
	if code == 0 {
		return nil
	}
	st, name := cuStatus(code)
	return hipsys.NewError(platformName, call, st, name)
}

// nvrtcResultNames are nvrtcResult's names; hiprtcResult has the same numbers for the same
// meanings (nvidia_hiprtc.h maps them one to one), and NVRTC's results past
// INTERNAL_ERROR become HIPRTC_ERROR_INTERNAL_ERROR, as there.
var nvrtcResultNames = []string{
	"NVRTC_SUCCESS", "NVRTC_ERROR_OUT_OF_MEMORY", "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	"NVRTC_ERROR_INVALID_INPUT", "NVRTC_ERROR_INVALID_PROGRAM", "NVRTC_ERROR_INVALID_OPTION",
	"NVRTC_ERROR_COMPILATION", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	"NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION", "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	"NVRTC_ERROR_INTERNAL_ERROR", "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	"NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED", "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
	"NVRTC_ERROR_PCH_CREATE", "NVRTC_ERROR_CANCELLED", "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

// nvrtcStatus is hiprtc's result for an nvrtcResult and NVRTC's name for it.
func nvrtcStatus(code int32) (hipsys.RTCStatus, string) {
	name := "nvrtcResult(" + strconv.Itoa(int(code)) + ")"
	if code >= 0 && int(code) < len(nvrtcResultNames) {
		name = nvrtcResultNames[code]
	}
	if code >= 0 && code <= int32(hipsys.RTCErrorInternalError) {
		return hipsys.RTCStatus(code), name
	}
	return hipsys.RTCErrorInternalError, name
}

// nvrtcError is the *hipsys.Error of a failed NVRTC call; detail is appended after the
// result's name (the compile log, for a failed compile).
func nvrtcError(call string, code int32, detail string) error {
	if code == 0 {
		return nil
	}
	st, name := nvrtcStatus(code)
	if detail != "" {
		name += ": " + detail
	}
	return hipsys.NewRTCError(platformName, call, st, name)
}
