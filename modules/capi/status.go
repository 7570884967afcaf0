package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -I${SRCDIR}
#cgo noescape capi_clear_last_error
#cgo nocallback capi_clear_last_error
#include "capi.h"
*/
import "C"

import (
	"errors"
	"strings"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// cubehip's own statuses, above HIP's range (include/cubehip.h).
const (
	statusSuccess         C.cubehip_status = 0
	statusInvalidHandle   C.cubehip_status = 10001
	statusInvalidArgument C.cubehip_status = 10002
	statusCompile         C.cubehip_status = 10003
	statusClosed          C.cubehip_status = 10004
	statusCaptureRefused  C.cubehip_status = 10005
	statusUnsupported     C.cubehip_status = 10006
	statusInternal        C.cubehip_status = 10007
)

var ownNames = map[C.cubehip_status]string{
	statusInvalidHandle:   "CUBEHIP_ERROR_INVALID_HANDLE",
	statusInvalidArgument: "CUBEHIP_ERROR_INVALID_ARGUMENT",
	statusCompile:         "CUBEHIP_ERROR_COMPILE",
	statusClosed:          "CUBEHIP_ERROR_CLOSED",
	statusCaptureRefused:  "CUBEHIP_ERROR_CAPTURE_REFUSED",
	statusUnsupported:     "CUBEHIP_ERROR_UNSUPPORTED",
	statusInternal:        "CUBEHIP_ERROR_INTERNAL",
}

// handleError is a call on a handle that names nothing live.
type handleError struct {
	k  kind
	id uint64
}

func (e handleError) Error() string {
	if e.id == 0 {
		return "invalid " + e.k.String() + " handle: the zero handle"
	}
	return "invalid " + e.k.String() + " handle " + hex(e.id) + ": released, destroyed, closed with its device, or never made"
}

// argError is an argument refused before anything was done.
type argError string

func (e argError) Error() string { return string(e) }

func hex(v uint64) string {
	const digits = "0123456789abcdef"
	var b [18]byte
	i := len(b)
	for {
		i--
		b[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	i--
	b[i] = 'x'
	i--
	b[i] = '0'
	return string(b[i:])
}

// statusOf is the status a Go error is reported with: cubehip's own for what the
// library or the Device refused, HIP's number for a failure that came from HIP (a
// buffer's carried failure keeps the status of the call that caused it).
func statusOf(err error) C.cubehip_status {
	var he handleError
	var ae argError
	var ce *server.CompileError
	var rf refusal
	var cf captureFailed
	switch {
	case err == nil:
		return statusSuccess
	case errors.As(err, &rf), errors.As(err, &cf):
		return statusCaptureRefused
	case errors.As(err, &he), errors.Is(err, server.ErrReleased), errors.Is(err, server.ErrForeign):
		return statusInvalidHandle
	case errors.As(err, &ae), errors.Is(err, server.ErrInvalidArgument),
		errors.Is(err, server.ErrOutOfBounds), errors.Is(err, server.ErrCaptureState):
		return statusInvalidArgument
	case errors.Is(err, server.ErrRecorded):
		return statusCaptureRefused
	case errors.As(err, &ce), errors.Is(err, server.ErrCompilation):
		return statusCompile
	case errors.Is(err, server.ErrClosed):
		return statusClosed
	case errors.Is(err, server.ErrTooBig):
		return C.cubehip_status(hipsys.ErrorOutOfMemory)
	}
	if s := hipsys.StatusOf(err); s != hipsys.ErrorUnknown || hasStatus(err) {
		return C.cubehip_status(s)
	}
	return statusInternal
}

// hasStatus tells a real hipErrorUnknown from an error that carries no status at all.
func hasStatus(err error) bool {
	var s hipsys.Status
	return errors.As(err, &s)
}

// fail records err as the calling thread's last error and returns its status.
func fail(err error) C.cubehip_status {
	msg := cMessage(err.Error())
	if len(msg) == 0 {
		msg = "error"
	}
	// SAFETY: the message's bytes are read during the call and copied into C memory.
	C.capi_set_last_error((*C.char)(unsafe.Pointer(unsafe.StringData(msg))), C.size_t(len(msg)))
	setLastReports(err)
	return statusOf(err)
}

// success is the status of a call that succeeded: the calling thread's last error is emptied,
// as include/cubehip.h promises ("" when its last call succeeded), so a message a host
// reads always belongs to the call it just made.
func success() C.cubehip_status {
	C.capi_clear_last_error()
	return statusSuccess
}

// result is the status of a call that returns err: success, or err recorded.
func result(err error) C.cubehip_status {
	if err == nil {
		return success()
	}
	return fail(err)
}

// statusNames holds each status name as C memory that lives as long as the process, so
// cubehip_status_string can return a pointer the host may keep.
var (
	namesMu     sync.Mutex
	statusNames = map[C.cubehip_status]*C.capi_cchar{}
)

//export cubehip_status_string
func cubehip_status_string(status C.cubehip_status) *C.capi_cchar {
	namesMu.Lock()
	defer namesMu.Unlock()
	if p, ok := statusNames[status]; ok {
		return p
	}
	name, ok := ownNames[status]
	if !ok {
		if status == 0 {
			name = "CUBEHIP_SUCCESS"
		} else if n := hipsys.Status(status).Name(); isKnownHIP(n) {
			name = n
		} else {
			name = "unknown status"
		}
	}
	p := (*C.capi_cchar)(C.CString(name)) // never freed: the pointer is handed out for good
	statusNames[status] = p
	return p
}

// isKnownHIP tells a HIP status name from Status.String's rendering of a number HIP does
// not define.
func isKnownHIP(name string) bool {
	return strings.HasPrefix(name, "hipError") && !strings.Contains(name, "(")
}
