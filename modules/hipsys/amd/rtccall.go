package amd

// #include <stdlib.h>
// #include "trampolines.h"
import "C"

import (
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The hiprtc calls themselves, on the library rather than the Platform, so that
// CompileFor can use them with no device and no platform open.
//
// Every hiprtc call holds rtcMu, one per process like hiprtc itself: ROCm 5.2's hiprtc
// crashes (SIGSEGV inside hiprtcCompileProgram) when two programs compile at once, which
// the parallel ahead-of-time test showed. Compiles are cached above this layer, so
// serializing them costs little; on a release known to be safe the lock could be relaxed.
var rtcMu sync.Mutex

// rtcReady locks hiprtc when it is available; the caller unlocks rtcMu.
func (l *library) rtcReady(call string) error {
	if l.rtc == nil {
		return hipsys.NewError(name, call, hipsys.ErrorNotSupported, l.rtcErr.Error())
	}
	rtcMu.Lock()
	return nil
}

func rtcCheck(call string, r C.int, detail string) error {
	if r == 0 {
		return nil
	}
	return hipsys.NewRTCError(name, call, hipsys.RTCStatus(r), detail)
}

func (l *library) create(source, progName string, headers []hipsys.Header) (uintptr, error) {
	const call = "hiprtcCreateProgram"
	if err := l.rtcReady(call); err != nil {
		return 0, err
	}
	defer rtcMu.Unlock()
	source, headers = l.rtcProgram(source, headers)
	src := C.CString(source)
	defer C.free(unsafe.Pointer(src))
	var cname *C.char
	if progName != "" {
		cname = C.CString(progName)
		defer C.free(unsafe.Pointer(cname))
	}
	bodies, names := make([]string, len(headers)), make([]string, len(headers))
	for i, h := range headers {
		bodies[i], names[i] = h.Source, h.Name
	}
	hb, freeB := cStrings(bodies)
	defer freeB()
	hn, freeN := cStrings(names)
	defer freeN()
	var h C.uintptr_t
	// SAFETY: every string is C memory freed after the call; hiprtc copies them.
	if err := rtcCheck(call, C.amdt_rtc_create(l.rtc.create, &h, src, cname, C.int(len(headers)), hb, hn), ""); err != nil {
		return 0, err
	}
	return uintptr(h), nil
}

// compile runs hiprtcCompileProgram with rtcOptions; on failure the log is the Detail.
func (l *library) compile(h uintptr, arch string, user []string) error {
	const call = "hiprtcCompileProgram"
	if err := l.rtcReady(call); err != nil {
		return err
	}
	defer rtcMu.Unlock()
	opts, err := l.rtcOptions(arch, user)
	if err != nil {
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorInvalidOption, err.Error())
	}
	arr, free := cStrings(opts)
	defer free()
	r := C.amdt_rtc_compile(l.rtc.compile, C.uintptr_t(h), C.int(len(opts)), arr)
	if r == 0 {
		return nil
	}
	b, _ := l.fetch("hiprtcGetProgramLogSize", l.rtc.logSize, "hiprtcGetProgramLog", l.rtc.log, h)
	log := cString(b)
	if log == "" {
		log = "hiprtc gave no log; options were " + joinQuoted(opts)
	}
	return hipsys.NewRTCError(name, call, hipsys.RTCStatus(r), log)
}

func joinQuoted(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += " "
		}
		out += "'" + s + "'"
	}
	return out
}

// fetch reads a size-then-bytes pair of hiprtc calls (log, code) into Go memory; the
// caller holds rtcMu.
func (l *library) fetch(sizeCall string, sizeFn unsafe.Pointer, getCall string, getFn unsafe.Pointer, h uintptr) ([]byte, error) {
	var n C.size_t
	if err := rtcCheck(sizeCall, C.amdt_rtc_size(sizeFn, C.uintptr_t(h), &n), ""); err != nil || n == 0 {
		return nil, err
	}
	buf := make([]byte, int(n))
	// SAFETY: buf is Go memory of exactly the size hiprtc reported, lent for the call.
	if err := rtcCheck(getCall, C.amdt_rtc_get(getFn, C.uintptr_t(h), (*C.char)(unsafe.Pointer(&buf[0]))), ""); err != nil {
		return nil, err
	}
	return buf, nil
}

func (l *library) programLog(h uintptr) (string, error) {
	if err := l.rtcReady("hiprtcGetProgramLog"); err != nil {
		return "", err
	}
	defer rtcMu.Unlock()
	b, err := l.fetch("hiprtcGetProgramLogSize", l.rtc.logSize, "hiprtcGetProgramLog", l.rtc.log, h)
	return cString(b), err
}

func (l *library) code(h uintptr) ([]byte, error) {
	if err := l.rtcReady("hiprtcGetCode"); err != nil {
		return nil, err
	}
	defer rtcMu.Unlock()
	return l.fetch("hiprtcGetCodeSize", l.rtc.codeSize, "hiprtcGetCode", l.rtc.code, h)
}

// addName is hiprtcAddNameExpression.
func (l *library) addName(h uintptr, expr string) error {
	const call = "hiprtcAddNameExpression"
	if err := l.rtcReady(call); err != nil {
		return err
	}
	defer rtcMu.Unlock()
	if l.rtc.addName == nil {
		return hipsys.NewRTCError(name, call, hipsys.RTCErrorInternalError, l.rtc.lib+" has no hiprtcAddNameExpression")
	}
	cexpr := C.CString(expr)
	defer C.free(unsafe.Pointer(cexpr))
	// SAFETY: cexpr is C memory freed after the call; hiprtc copies it.
	return rtcCheck(call, C.amdt_rtc_add_name(l.rtc.addName, C.uintptr_t(h), cexpr), expr)
}

// loweredName is hiprtcGetLoweredName, copied into Go memory.
func (l *library) loweredName(h uintptr, expr string) (string, error) {
	const call = "hiprtcGetLoweredName"
	if err := l.rtcReady(call); err != nil {
		return "", err
	}
	defer rtcMu.Unlock()
	if l.rtc.lowered == nil {
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorInternalError, l.rtc.lib+" has no hiprtcGetLoweredName")
	}
	cexpr := C.CString(expr)
	defer C.free(unsafe.Pointer(cexpr))
	var out *C.char
	// SAFETY: cexpr is C memory freed after the call; out points into the program, which
	// the caller's lock keeps alive while it is copied.
	if err := rtcCheck(call, C.amdt_rtc_lowered(l.rtc.lowered, C.uintptr_t(h), cexpr, &out), expr); err != nil {
		return "", err
	}
	if out == nil {
		return "", hipsys.NewRTCError(name, call, hipsys.RTCErrorNameExpressionNotValid, expr+": hiprtc gave no name")
	}
	return C.GoString(out), nil
}

func (l *library) destroy(h uintptr) error {
	if err := l.rtcReady("hiprtcDestroyProgram"); err != nil {
		return err
	}
	defer rtcMu.Unlock()
	return rtcCheck("hiprtcDestroyProgram", C.amdt_rtc_destroy(l.rtc.destroy, C.uintptr_t(h)), "")
}
