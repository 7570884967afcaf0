package nvidia

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Rows copied from HIP's hipCUResultTohipError (nvidia_hip_runtime_api.h), by number.
func TestCUResultMapsAsHIPDoes(t *testing.T) {
	for _, tc := range []struct {
		code int32
		want hipsys.Status
		name string
	}{
		{0, hipsys.Success, "CUDA_SUCCESS"},
		{1, hipsys.ErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE"},
		{2, hipsys.ErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{3, hipsys.ErrorNotInitialized, "CUDA_ERROR_NOT_INITIALIZED"},
		{100, hipsys.ErrorNoDevice, "CUDA_ERROR_NO_DEVICE"},
		{101, hipsys.ErrorInvalidDevice, "CUDA_ERROR_INVALID_DEVICE"},
		{200, hipsys.ErrorInvalidImage, "CUDA_ERROR_INVALID_IMAGE"},
		{201, hipsys.ErrorInvalidContext, "CUDA_ERROR_INVALID_CONTEXT"},
		{209, hipsys.ErrorNoBinaryForGpu, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{218, hipsys.ErrorInvalidKernelFile, "CUDA_ERROR_INVALID_PTX"},
		{400, hipsys.ErrorInvalidHandle, "CUDA_ERROR_INVALID_HANDLE"},
		{500, hipsys.ErrorNotFound, "CUDA_ERROR_NOT_FOUND"},
		{600, hipsys.ErrorNotReady, "CUDA_ERROR_NOT_READY"},
		{700, hipsys.ErrorIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{701, hipsys.ErrorLaunchOutOfResources, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
		{708, hipsys.ErrorSetOnActiveProcess, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"},
		{709, hipsys.ErrorContextIsDestroyed, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
		{719, hipsys.ErrorLaunchFailure, "CUDA_ERROR_LAUNCH_FAILED"},
		{801, hipsys.ErrorNotSupported, "CUDA_ERROR_NOT_SUPPORTED"},
		{900, hipsys.ErrorStreamCaptureUnsupported, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
		{901, hipsys.ErrorStreamCaptureInvalidated, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
		{906, hipsys.ErrorStreamCaptureImplicit, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
		{908, hipsys.ErrorStreamCaptureWrongThread, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
		{910, hipsys.ErrorGraphExecUpdateFailure, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
		// Not in HIP's switch: its default, hipErrorUnknown.
		{716, hipsys.ErrorUnknown, "CUDA_ERROR_MISALIGNED_ADDRESS"},
		{34, hipsys.ErrorUnknown, "CUDA_ERROR_STUB_LIBRARY"},
		{999, hipsys.ErrorUnknown, "CUDA_ERROR_UNKNOWN"},
		{12345, hipsys.ErrorUnknown, "CUresult(12345)"},
	} {
		st, name := cuStatus(tc.code)
		assert.Equal(t, tc.want, st, "CUresult %d", tc.code)
		assert.Equal(t, tc.name, name, "CUresult %d", tc.code)
	}
}

func TestCUResultTableIsConsistent(t *testing.T) {
	seen := map[int32]bool{}
	for _, r := range cuResults {
		assert.False(t, seen[r.code], "CUresult %d listed twice", r.code)
		seen[r.code] = true
		// HIP chose its numbers to match CUDA's: every mapped row keeps its number.
		if r.status != hipsys.ErrorUnknown {
			assert.Equal(t, r.code, int32(r.status), "%s", r.name)
		}
	}
}

func TestCUErrorCarriesCallAndName(t *testing.T) {
	assert.NoError(t, cuError("hipMalloc", 0))
	err := cuError("hipMalloc", 2)
	require.Error(t, err)
	var he *hipsys.Error
	require.True(t, errors.As(err, &he))
	assert.Equal(t, "nvidia", he.Platform)
	assert.Equal(t, "hipMalloc", he.Call)
	assert.Equal(t, hipsys.ErrorOutOfMemory, he.Status)
	assert.Contains(t, he.Detail, "CUDA_ERROR_OUT_OF_MEMORY")
	assert.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
}

func TestNVRTCResultMapsAsHIPDoes(t *testing.T) {
	for _, tc := range []struct {
		code int32
		want hipsys.RTCStatus
		name string
	}{
		{0, hipsys.RTCSuccess, "NVRTC_SUCCESS"},
		{5, hipsys.RTCErrorInvalidOption, "NVRTC_ERROR_INVALID_OPTION"},
		{6, hipsys.RTCErrorCompilation, "NVRTC_ERROR_COMPILATION"},
		{11, hipsys.RTCErrorInternalError, "NVRTC_ERROR_INTERNAL_ERROR"},
		// Newer NVRTC results are HIPRTC_ERROR_INTERNAL_ERROR in nvidia_hiprtc.h.
		{12, hipsys.RTCErrorInternalError, "NVRTC_ERROR_TIME_FILE_WRITE_FAILED"},
		{99, hipsys.RTCErrorInternalError, "nvrtcResult(99)"},
	} {
		st, name := nvrtcStatus(tc.code)
		assert.Equal(t, tc.want, st, "nvrtcResult %d", tc.code)
		assert.Equal(t, tc.name, name)
	}
	err := nvrtcError("hiprtcCompileProgram", 6, "kernel.hip(3): error: x is undefined")
	assert.ErrorIs(t, err, hipsys.RTCErrorCompilation)
	assert.Contains(t, err.Error(), "x is undefined")
	assert.NoError(t, nvrtcError("hiprtcCompileProgram", 0, ""))
}
