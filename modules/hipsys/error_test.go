package hipsys

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorFormats(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{NewError("cpu", "hipMalloc", ErrorOutOfMemory, "8 bytes exceed the device's free memory"),
			"cpu: hipMalloc: hipErrorOutOfMemory (2): 8 bytes exceed the device's free memory"},
		{NewError("amd", "hipStreamQuery", ErrorNotReady, ""), "amd: hipStreamQuery: hipErrorNotReady (600)"},
		{NewRTCError("nvidia", "hiprtcCompileProgram", RTCErrorCompilation, "k.hip:1: error"),
			"nvidia: hiprtcCompileProgram: HIPRTC_ERROR_COMPILATION (6): k.hip:1: error"},
		{&Error{Platform: "cpu", Call: "hipFree", Status: Status(4242)}, "cpu: hipFree: hipError(4242) (4242)"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}

func TestErrorUnwrapsToItsStatusThroughWrapping(t *testing.T) {
	err := fmt.Errorf("reading: %w", NewError("cpu", "hipMemcpyDtoH", ErrorInvalidValue, "x"))
	assert.ErrorIs(t, err, ErrorInvalidValue)
	assert.NotErrorIs(t, err, ErrorOutOfMemory)
	assert.Equal(t, ErrorInvalidValue, StatusOf(err))
	var he *Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "hipMemcpyDtoH", he.Call)

	rtc := NewRTCError("cpu", "hiprtcCompileProgram", RTCErrorInvalidOption, "")
	assert.ErrorIs(t, rtc, RTCErrorInvalidOption)
	assert.NotErrorIs(t, rtc, Success, "an RTC error unwraps to its RTCStatus, not the empty Status")
	assert.Equal(t, ErrorUnknown, StatusOf(rtc), "a hiprtc result carries no hipError_t")
}

// A cause is reachable after the status, and the call's own status wins over any status
// the cause carries.
func TestErrorCause(t *testing.T) {
	inner := NewError("amd", "hipInit", ErrorNoDevice, "")
	e := &Error{Platform: "amd", Call: "hipInit", Status: ErrorNotInitialized, Cause: fmt.Errorf("loading: %w: %w", fs.ErrNotExist, inner)}
	assert.ErrorIs(t, e, fs.ErrNotExist)
	assert.ErrorIs(t, e, ErrorNotInitialized)
	assert.ErrorIs(t, e, ErrorNoDevice, "the cause's status is reachable too")
	assert.Equal(t, ErrorNotInitialized, StatusOf(e))
	assert.Equal(t, "amd: hipInit: hipErrorNotInitialized (3)", e.Error(), "the cause is not printed: Detail says what a reader needs")
}

func TestStatusOf(t *testing.T) {
	assert.Equal(t, Success, StatusOf(nil))
	assert.Equal(t, ErrorUnknown, StatusOf(errors.New("plain")))
	assert.Equal(t, ErrorNotReady, StatusOf(ErrorNotReady))
}
