package hipsys

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hipStatuses is hipError_t as HIP's header defines it: each status's Go constant, its
// number and its name. A status renamed or renumbered in status.go fails here, and one
// added there without a line here fails the completeness check: a status read out of
// libamdhip64 is used without translation, so these numbers are an ABI.
var hipStatuses = []struct {
	s    Status
	num  int32
	name string
}{
	{Success, 0, "hipSuccess"},
	{ErrorInvalidValue, 1, "hipErrorInvalidValue"},
	{ErrorOutOfMemory, 2, "hipErrorOutOfMemory"},
	{ErrorNotInitialized, 3, "hipErrorNotInitialized"},
	{ErrorDeinitialized, 4, "hipErrorDeinitialized"},
	{ErrorProfilerDisabled, 5, "hipErrorProfilerDisabled"},
	{ErrorProfilerNotInitialized, 6, "hipErrorProfilerNotInitialized"},
	{ErrorProfilerAlreadyStarted, 7, "hipErrorProfilerAlreadyStarted"},
	{ErrorProfilerAlreadyStopped, 8, "hipErrorProfilerAlreadyStopped"},
	{ErrorInvalidConfiguration, 9, "hipErrorInvalidConfiguration"},
	{ErrorInvalidPitchValue, 12, "hipErrorInvalidPitchValue"},
	{ErrorInvalidSymbol, 13, "hipErrorInvalidSymbol"},
	{ErrorInvalidDevicePointer, 17, "hipErrorInvalidDevicePointer"},
	{ErrorInvalidMemcpyDirection, 21, "hipErrorInvalidMemcpyDirection"},
	{ErrorInsufficientDriver, 35, "hipErrorInsufficientDriver"},
	{ErrorMissingConfiguration, 52, "hipErrorMissingConfiguration"},
	{ErrorPriorLaunchFailure, 53, "hipErrorPriorLaunchFailure"},
	{ErrorInvalidDeviceFunction, 98, "hipErrorInvalidDeviceFunction"},
	{ErrorNoDevice, 100, "hipErrorNoDevice"},
	{ErrorInvalidDevice, 101, "hipErrorInvalidDevice"},
	{ErrorInvalidImage, 200, "hipErrorInvalidImage"},
	{ErrorInvalidContext, 201, "hipErrorInvalidContext"},
	{ErrorContextAlreadyCurrent, 202, "hipErrorContextAlreadyCurrent"},
	{ErrorMapFailed, 205, "hipErrorMapFailed"},
	{ErrorUnmapFailed, 206, "hipErrorUnmapFailed"},
	{ErrorArrayIsMapped, 207, "hipErrorArrayIsMapped"},
	{ErrorAlreadyMapped, 208, "hipErrorAlreadyMapped"},
	{ErrorNoBinaryForGpu, 209, "hipErrorNoBinaryForGpu"},
	{ErrorAlreadyAcquired, 210, "hipErrorAlreadyAcquired"},
	{ErrorNotMapped, 211, "hipErrorNotMapped"},
	{ErrorNotMappedAsArray, 212, "hipErrorNotMappedAsArray"},
	{ErrorNotMappedAsPointer, 213, "hipErrorNotMappedAsPointer"},
	{ErrorECCNotCorrectable, 214, "hipErrorECCNotCorrectable"},
	{ErrorUnsupportedLimit, 215, "hipErrorUnsupportedLimit"},
	{ErrorContextAlreadyInUse, 216, "hipErrorContextAlreadyInUse"},
	{ErrorPeerAccessUnsupported, 217, "hipErrorPeerAccessUnsupported"},
	{ErrorInvalidKernelFile, 218, "hipErrorInvalidKernelFile"},
	{ErrorInvalidGraphicsContext, 219, "hipErrorInvalidGraphicsContext"},
	{ErrorInvalidSource, 300, "hipErrorInvalidSource"},
	{ErrorFileNotFound, 301, "hipErrorFileNotFound"},
	{ErrorSharedObjectSymbolNotFound, 302, "hipErrorSharedObjectSymbolNotFound"},
	{ErrorSharedObjectInitFailed, 303, "hipErrorSharedObjectInitFailed"},
	{ErrorOperatingSystem, 304, "hipErrorOperatingSystem"},
	{ErrorInvalidHandle, 400, "hipErrorInvalidHandle"},
	{ErrorIllegalState, 401, "hipErrorIllegalState"},
	{ErrorNotFound, 500, "hipErrorNotFound"},
	{ErrorNotReady, 600, "hipErrorNotReady"},
	{ErrorIllegalAddress, 700, "hipErrorIllegalAddress"},
	{ErrorLaunchOutOfResources, 701, "hipErrorLaunchOutOfResources"},
	{ErrorLaunchTimeOut, 702, "hipErrorLaunchTimeOut"},
	{ErrorPeerAccessAlreadyEnabled, 704, "hipErrorPeerAccessAlreadyEnabled"},
	{ErrorPeerAccessNotEnabled, 705, "hipErrorPeerAccessNotEnabled"},
	{ErrorSetOnActiveProcess, 708, "hipErrorSetOnActiveProcess"},
	{ErrorContextIsDestroyed, 709, "hipErrorContextIsDestroyed"},
	{ErrorAssert, 710, "hipErrorAssert"},
	{ErrorHostMemoryAlreadyRegistered, 712, "hipErrorHostMemoryAlreadyRegistered"},
	{ErrorHostMemoryNotRegistered, 713, "hipErrorHostMemoryNotRegistered"},
	{ErrorLaunchFailure, 719, "hipErrorLaunchFailure"},
	{ErrorCooperativeLaunchTooLarge, 720, "hipErrorCooperativeLaunchTooLarge"},
	{ErrorNotSupported, 801, "hipErrorNotSupported"},
	{ErrorStreamCaptureUnsupported, 900, "hipErrorStreamCaptureUnsupported"},
	{ErrorStreamCaptureInvalidated, 901, "hipErrorStreamCaptureInvalidated"},
	{ErrorStreamCaptureMerge, 902, "hipErrorStreamCaptureMerge"},
	{ErrorStreamCaptureUnmatched, 903, "hipErrorStreamCaptureUnmatched"},
	{ErrorStreamCaptureUnjoined, 904, "hipErrorStreamCaptureUnjoined"},
	{ErrorStreamCaptureIsolation, 905, "hipErrorStreamCaptureIsolation"},
	{ErrorStreamCaptureImplicit, 906, "hipErrorStreamCaptureImplicit"},
	{ErrorCapturedEvent, 907, "hipErrorCapturedEvent"},
	{ErrorStreamCaptureWrongThread, 908, "hipErrorStreamCaptureWrongThread"},
	{ErrorGraphExecUpdateFailure, 910, "hipErrorGraphExecUpdateFailure"},
	{ErrorUnknown, 999, "hipErrorUnknown"},
	{ErrorRuntimeMemory, 1052, "hipErrorRuntimeMemory"},
	{ErrorRuntimeOther, 1053, "hipErrorRuntimeOther"},
}

var rtcStatuses = []struct {
	s    RTCStatus
	num  int32
	name string
}{
	{RTCSuccess, 0, "HIPRTC_SUCCESS"},
	{RTCErrorOutOfMemory, 1, "HIPRTC_ERROR_OUT_OF_MEMORY"},
	{RTCErrorProgramCreationFailure, 2, "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE"},
	{RTCErrorInvalidInput, 3, "HIPRTC_ERROR_INVALID_INPUT"},
	{RTCErrorInvalidProgram, 4, "HIPRTC_ERROR_INVALID_PROGRAM"},
	{RTCErrorInvalidOption, 5, "HIPRTC_ERROR_INVALID_OPTION"},
	{RTCErrorCompilation, 6, "HIPRTC_ERROR_COMPILATION"},
	{RTCErrorBuiltinOperationFailure, 7, "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE"},
	{RTCErrorNoNameExpressionsAfterCompile, 8, "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION"},
	{RTCErrorNoLoweredNamesBeforeCompile, 9, "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION"},
	{RTCErrorNameExpressionNotValid, 10, "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID"},
	{RTCErrorInternalError, 11, "HIPRTC_ERROR_INTERNAL_ERROR"},
	{RTCErrorLinking, 100, "HIPRTC_ERROR_LINKING"},
}

func TestStatusesKeepHIPsNumbersAndNames(t *testing.T) {
	for _, tc := range hipStatuses {
		assert.Equal(t, tc.num, int32(tc.s), "%s renumbered", tc.name)
		assert.Equal(t, tc.name, tc.s.Name(), "status %d renamed", tc.num)
		assert.Equal(t, tc.name+" ("+strconv.Itoa(int(tc.num))+")", tc.s.Error())
	}
	assert.Len(t, statusNames, len(hipStatuses), "a status in status.go has no line in this table (or the other way round)")
	for _, tc := range rtcStatuses {
		assert.Equal(t, tc.num, int32(tc.s), "%s renumbered", tc.name)
		assert.Equal(t, tc.name, tc.s.Name(), "hiprtc result %d renamed", tc.num)
	}
	assert.Len(t, rtcNames, len(rtcStatuses))
}

func TestUnknownStatusesStillPrint(t *testing.T) {
	assert.Equal(t, "hipError(1234)", Status(1234).Name())
	assert.Equal(t, "hipError(1234) (1234)", Status(1234).Error())
	assert.Equal(t, "HIPRTC_ERROR(77)", RTCStatus(77).Name())
	assert.Equal(t, "HIPRTC_ERROR(-1) (-1)", RTCStatus(-1).Error())
}

// The installed HIP headers are the authority the table above copies: where they are
// present (scripts/deps.sh installs ROCm's), every status they define with one of our
// names must have our number.
func TestStatusesMatchTheInstalledHeaders(t *testing.T) {
	for _, h := range []struct {
		path string
		re   string
		get  func() map[string]int32
	}{
		{"/usr/include/hip/hip_runtime_api.h", `\b(hip(?:Success|Error[A-Za-z]+))\s*=\s*(\d+)`, func() map[string]int32 {
			m := map[string]int32{}
			for _, tc := range hipStatuses {
				m[tc.name] = tc.num
			}
			return m
		}},
		{"/usr/include/hip/hiprtc.h", `\b(HIPRTC_[A-Z_]+)\s*=\s*(\d+)`, func() map[string]int32 {
			m := map[string]int32{}
			for _, tc := range rtcStatuses {
				m[tc.name] = tc.num
			}
			return m
		}},
	} {
		src, err := os.ReadFile(h.path)
		if os.IsNotExist(err) && os.Getenv("CUBEHIP_REQUIRE_AMD") == "" {
			t.Logf("%s not installed; the table test alone holds the numbers", h.path)
			continue
		}
		require.NoError(t, err)
		ours := h.get()
		matched := 0
		for _, m := range regexp.MustCompile(h.re).FindAllStringSubmatch(string(src), -1) {
			n, err := strconv.Atoi(m[2])
			require.NoError(t, err)
			if want, ok := ours[m[1]]; ok {
				assert.Equal(t, want, int32(n), "%s in %s", m[1], h.path)
				matched++
			}
		}
		assert.Greater(t, matched, len(ours)*3/4, "%s defines too few of our statuses: is it HIP's header?", h.path)
	}
}
