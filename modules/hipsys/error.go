package hipsys

import "errors"

// Error is a failed HIP call: which platform, which call (HIP's name for it, so the
// message reads the same on every platform), HIP's status and, where the platform knows
// more than the status says, why. It unwraps to its Status (or RTCStatus for hiprtc
// calls), so errors.Is(err, hipsys.ErrorOutOfMemory) works through any wrapping.
type Error struct {
	Platform  string    // "cpu", "nvidia", "amd"
	Call      string    // "hipMalloc", "hiprtcCompileProgram", ...
	Status    Status    // the hipError_t; Success when RTCStatus carries the result
	RTCStatus RTCStatus // the hiprtcResult of a hiprtc call
	Detail    string    // the platform's own words: a driver status, a compile log, a size
	// Cause is the error underneath, where there is one that is not a HIP status (the
	// dynamic loader's, for a platform that could not be opened). errors.Is and errors.As
	// see it, after the status.
	Cause error
}

func (e *Error) Error() string {
	msg := e.Platform + ": " + e.Call + ": "
	if e.RTCStatus != RTCSuccess {
		msg += e.RTCStatus.Error()
	} else {
		msg += e.Status.Error()
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap is the status first (so errors.As(err, &status) finds this call's, not one of
// its cause's), then the cause, if any.
func (e *Error) Unwrap() []error {
	var status error = e.Status
	if e.RTCStatus != RTCSuccess {
		status = e.RTCStatus
	}
	if e.Cause == nil {
		return []error{status}
	}
	return []error{status, e.Cause}
}

// NewError builds a platform's *Error. Platforms call it; users read the result.
func NewError(platform, call string, status Status, detail string) *Error {
	return &Error{Platform: platform, Call: call, Status: status, Detail: detail}
}

// NewRTCError builds the *Error of a failed hiprtc call.
func NewRTCError(platform, call string, status RTCStatus, detail string) *Error {
	return &Error{Platform: platform, Call: call, RTCStatus: status, Detail: detail}
}

// StatusOf is the HIP status an error carries: Success for nil, ErrorUnknown for an
// error that carries none (which no platform returns, but a wrapper might).
func StatusOf(err error) Status {
	if err == nil {
		return Success
	}
	var s Status
	if errors.As(err, &s) {
		return s
	}
	return ErrorUnknown
}
