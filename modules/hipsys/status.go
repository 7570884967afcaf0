package hipsys

import "strconv"

// Status is a hipError_t: HIP's status codes are the error vocabulary of every
// platform, so a caller tests for hipErrorNotReady the same way on the cpu, nvidia and
// amd platforms (errors.Is(err, hipsys.ErrorNotReady)). The numbers are HIP's own, so a
// status read out of libamdhip64 needs no translation.
type Status int32

// hipError_t values, as in hip_runtime_api.h (ROCm 5.2 through 7.x keep these numbers).
const (
	Success                          Status = 0
	ErrorInvalidValue                Status = 1
	ErrorOutOfMemory                 Status = 2
	ErrorNotInitialized              Status = 3
	ErrorDeinitialized               Status = 4
	ErrorProfilerDisabled            Status = 5
	ErrorProfilerNotInitialized      Status = 6
	ErrorProfilerAlreadyStarted      Status = 7
	ErrorProfilerAlreadyStopped      Status = 8
	ErrorInvalidConfiguration        Status = 9
	ErrorInvalidPitchValue           Status = 12
	ErrorInvalidSymbol               Status = 13
	ErrorInvalidDevicePointer        Status = 17
	ErrorInvalidMemcpyDirection      Status = 21
	ErrorInsufficientDriver          Status = 35
	ErrorMissingConfiguration        Status = 52
	ErrorPriorLaunchFailure          Status = 53
	ErrorInvalidDeviceFunction       Status = 98
	ErrorNoDevice                    Status = 100
	ErrorInvalidDevice               Status = 101
	ErrorInvalidImage                Status = 200
	ErrorInvalidContext              Status = 201
	ErrorContextAlreadyCurrent       Status = 202
	ErrorMapFailed                   Status = 205
	ErrorUnmapFailed                 Status = 206
	ErrorArrayIsMapped               Status = 207
	ErrorAlreadyMapped               Status = 208
	ErrorNoBinaryForGpu              Status = 209
	ErrorAlreadyAcquired             Status = 210
	ErrorNotMapped                   Status = 211
	ErrorNotMappedAsArray            Status = 212
	ErrorNotMappedAsPointer          Status = 213
	ErrorECCNotCorrectable           Status = 214
	ErrorUnsupportedLimit            Status = 215
	ErrorContextAlreadyInUse         Status = 216
	ErrorPeerAccessUnsupported       Status = 217
	ErrorInvalidKernelFile           Status = 218
	ErrorInvalidGraphicsContext      Status = 219
	ErrorInvalidSource               Status = 300
	ErrorFileNotFound                Status = 301
	ErrorSharedObjectSymbolNotFound  Status = 302
	ErrorSharedObjectInitFailed      Status = 303
	ErrorOperatingSystem             Status = 304
	ErrorInvalidHandle               Status = 400
	ErrorIllegalState                Status = 401
	ErrorNotFound                    Status = 500
	ErrorNotReady                    Status = 600
	ErrorIllegalAddress              Status = 700
	ErrorLaunchOutOfResources        Status = 701
	ErrorLaunchTimeOut               Status = 702
	ErrorPeerAccessAlreadyEnabled    Status = 704
	ErrorPeerAccessNotEnabled        Status = 705
	ErrorSetOnActiveProcess          Status = 708
	ErrorContextIsDestroyed          Status = 709
	ErrorAssert                      Status = 710
	ErrorHostMemoryAlreadyRegistered Status = 712
	ErrorHostMemoryNotRegistered     Status = 713
	ErrorLaunchFailure               Status = 719
	ErrorCooperativeLaunchTooLarge   Status = 720
	ErrorNotSupported                Status = 801
	ErrorStreamCaptureUnsupported    Status = 900
	ErrorStreamCaptureInvalidated    Status = 901
	ErrorStreamCaptureMerge          Status = 902
	ErrorStreamCaptureUnmatched      Status = 903
	ErrorStreamCaptureUnjoined       Status = 904
	ErrorStreamCaptureIsolation      Status = 905
	ErrorStreamCaptureImplicit       Status = 906
	ErrorCapturedEvent               Status = 907
	ErrorStreamCaptureWrongThread    Status = 908
	ErrorGraphExecUpdateFailure      Status = 910
	ErrorUnknown                     Status = 999
	ErrorRuntimeMemory               Status = 1052
	ErrorRuntimeOther                Status = 1053
)

var statusNames = map[Status]string{
	Success: "hipSuccess", ErrorInvalidValue: "hipErrorInvalidValue",
	ErrorOutOfMemory: "hipErrorOutOfMemory", ErrorNotInitialized: "hipErrorNotInitialized",
	ErrorDeinitialized: "hipErrorDeinitialized", ErrorProfilerDisabled: "hipErrorProfilerDisabled",
	ErrorProfilerNotInitialized: "hipErrorProfilerNotInitialized",
	ErrorProfilerAlreadyStarted: "hipErrorProfilerAlreadyStarted",
	ErrorProfilerAlreadyStopped: "hipErrorProfilerAlreadyStopped",
	ErrorInvalidConfiguration:   "hipErrorInvalidConfiguration",
	ErrorInvalidPitchValue:      "hipErrorInvalidPitchValue", ErrorInvalidSymbol: "hipErrorInvalidSymbol",
	ErrorInvalidDevicePointer:   "hipErrorInvalidDevicePointer",
	ErrorInvalidMemcpyDirection: "hipErrorInvalidMemcpyDirection",
	ErrorInsufficientDriver:     "hipErrorInsufficientDriver",
	ErrorMissingConfiguration:   "hipErrorMissingConfiguration",
	ErrorPriorLaunchFailure:     "hipErrorPriorLaunchFailure",
	ErrorInvalidDeviceFunction:  "hipErrorInvalidDeviceFunction", ErrorNoDevice: "hipErrorNoDevice",
	ErrorInvalidDevice: "hipErrorInvalidDevice", ErrorInvalidImage: "hipErrorInvalidImage",
	ErrorInvalidContext: "hipErrorInvalidContext", ErrorContextAlreadyCurrent: "hipErrorContextAlreadyCurrent",
	ErrorMapFailed: "hipErrorMapFailed", ErrorUnmapFailed: "hipErrorUnmapFailed",
	ErrorArrayIsMapped: "hipErrorArrayIsMapped", ErrorAlreadyMapped: "hipErrorAlreadyMapped",
	ErrorNoBinaryForGpu: "hipErrorNoBinaryForGpu", ErrorAlreadyAcquired: "hipErrorAlreadyAcquired",
	ErrorNotMapped: "hipErrorNotMapped", ErrorNotMappedAsArray: "hipErrorNotMappedAsArray",
	ErrorNotMappedAsPointer: "hipErrorNotMappedAsPointer", ErrorECCNotCorrectable: "hipErrorECCNotCorrectable",
	ErrorUnsupportedLimit: "hipErrorUnsupportedLimit", ErrorContextAlreadyInUse: "hipErrorContextAlreadyInUse",
	ErrorPeerAccessUnsupported:  "hipErrorPeerAccessUnsupported",
	ErrorInvalidKernelFile:      "hipErrorInvalidKernelFile",
	ErrorInvalidGraphicsContext: "hipErrorInvalidGraphicsContext",
	ErrorInvalidSource:          "hipErrorInvalidSource", ErrorFileNotFound: "hipErrorFileNotFound",
	ErrorSharedObjectSymbolNotFound: "hipErrorSharedObjectSymbolNotFound",
	ErrorSharedObjectInitFailed:     "hipErrorSharedObjectInitFailed",
	ErrorOperatingSystem:            "hipErrorOperatingSystem", ErrorInvalidHandle: "hipErrorInvalidHandle",
	ErrorIllegalState: "hipErrorIllegalState", ErrorNotFound: "hipErrorNotFound",
	ErrorNotReady: "hipErrorNotReady", ErrorIllegalAddress: "hipErrorIllegalAddress",
	ErrorLaunchOutOfResources: "hipErrorLaunchOutOfResources", ErrorLaunchTimeOut: "hipErrorLaunchTimeOut",
	ErrorPeerAccessAlreadyEnabled: "hipErrorPeerAccessAlreadyEnabled",
	ErrorPeerAccessNotEnabled:     "hipErrorPeerAccessNotEnabled",
	ErrorSetOnActiveProcess:       "hipErrorSetOnActiveProcess", ErrorContextIsDestroyed: "hipErrorContextIsDestroyed",
	ErrorAssert: "hipErrorAssert", ErrorHostMemoryAlreadyRegistered: "hipErrorHostMemoryAlreadyRegistered",
	ErrorHostMemoryNotRegistered: "hipErrorHostMemoryNotRegistered", ErrorLaunchFailure: "hipErrorLaunchFailure",
	ErrorCooperativeLaunchTooLarge: "hipErrorCooperativeLaunchTooLarge",
	ErrorNotSupported:              "hipErrorNotSupported",
	ErrorStreamCaptureUnsupported:  "hipErrorStreamCaptureUnsupported",
	ErrorStreamCaptureInvalidated:  "hipErrorStreamCaptureInvalidated",
	ErrorStreamCaptureMerge:        "hipErrorStreamCaptureMerge", ErrorStreamCaptureUnmatched: "hipErrorStreamCaptureUnmatched",
	ErrorStreamCaptureUnjoined:  "hipErrorStreamCaptureUnjoined",
	ErrorStreamCaptureIsolation: "hipErrorStreamCaptureIsolation",
	ErrorStreamCaptureImplicit:  "hipErrorStreamCaptureImplicit", ErrorCapturedEvent: "hipErrorCapturedEvent",
	ErrorStreamCaptureWrongThread: "hipErrorStreamCaptureWrongThread",
	ErrorGraphExecUpdateFailure:   "hipErrorGraphExecUpdateFailure", ErrorUnknown: "hipErrorUnknown",
	ErrorRuntimeMemory: "hipErrorRuntimeMemory", ErrorRuntimeOther: "hipErrorRuntimeOther",
}

// Name is HIP's name for the status ("hipErrorNotReady"); an unknown number reads
// "hipError(1234)" so a status from a newer ROCm is still printed, not lost.
func (s Status) Name() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "hipError(" + strconv.Itoa(int(s)) + ")"
}

// Error makes a bare Status usable as an error and as an errors.Is target.
func (s Status) Error() string { return s.Name() + " (" + strconv.Itoa(int(s)) + ")" }

// RTCStatus is a hiprtcResult. hiprtc numbers its results apart from hipError_t, so
// they get their own type rather than being squeezed into Status.
type RTCStatus int32

// hiprtcResult values, as in hiprtc.h.
const (
	RTCSuccess                            RTCStatus = 0
	RTCErrorOutOfMemory                   RTCStatus = 1
	RTCErrorProgramCreationFailure        RTCStatus = 2
	RTCErrorInvalidInput                  RTCStatus = 3
	RTCErrorInvalidProgram                RTCStatus = 4
	RTCErrorInvalidOption                 RTCStatus = 5
	RTCErrorCompilation                   RTCStatus = 6
	RTCErrorBuiltinOperationFailure       RTCStatus = 7
	RTCErrorNoNameExpressionsAfterCompile RTCStatus = 8
	RTCErrorNoLoweredNamesBeforeCompile   RTCStatus = 9
	RTCErrorNameExpressionNotValid        RTCStatus = 10
	RTCErrorInternalError                 RTCStatus = 11
	RTCErrorLinking                       RTCStatus = 100
)

var rtcNames = map[RTCStatus]string{
	RTCSuccess: "HIPRTC_SUCCESS", RTCErrorOutOfMemory: "HIPRTC_ERROR_OUT_OF_MEMORY",
	RTCErrorProgramCreationFailure: "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
	RTCErrorInvalidInput:           "HIPRTC_ERROR_INVALID_INPUT", RTCErrorInvalidProgram: "HIPRTC_ERROR_INVALID_PROGRAM",
	RTCErrorInvalidOption: "HIPRTC_ERROR_INVALID_OPTION", RTCErrorCompilation: "HIPRTC_ERROR_COMPILATION",
	RTCErrorBuiltinOperationFailure:       "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	RTCErrorNoNameExpressionsAfterCompile: "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	RTCErrorNoLoweredNamesBeforeCompile:   "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	RTCErrorNameExpressionNotValid:        "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	RTCErrorInternalError:                 "HIPRTC_ERROR_INTERNAL_ERROR", RTCErrorLinking: "HIPRTC_ERROR_LINKING",
}

// Name is hiprtc's name for the result ("HIPRTC_ERROR_COMPILATION").
func (s RTCStatus) Name() string {
	if n, ok := rtcNames[s]; ok {
		return n
	}
	return "HIPRTC_ERROR(" + strconv.Itoa(int(s)) + ")"
}

func (s RTCStatus) Error() string { return s.Name() + " (" + strconv.Itoa(int(s)) + ")" }
