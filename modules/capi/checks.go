package main

/*
#include "capi.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// setLastReports keeps the kernel checker's reports that err carries beside the calling
// thread's last error message (none when it carries none), for cubehip_last_check_reports.
func setLastReports(err error) {
	var reps *hipsys.CheckReports
	if !errors.As(err, &reps) || len(reps.Reports) == 0 {
		C.capi_set_last_reports(nil, 0, 0)
		return
	}
	var out [16]C.cubehip_check_report
	n := min(len(reps.Reports), len(out))
	for i, r := range reps.Reports[:n] {
		c := &out[i]
		c.size = C.size_t(unsafe.Sizeof(*c))
		cstr(c.check[:], r.Check)
		cstr(c.what[:], r.What)
		cstr(c.kernel[:], r.Kernel)
		cstr(c.param[:], r.Param)
		cstr(c.file[:], r.File)
		c.block = [3]C.uint32_t{C.uint32_t(r.Block.X), C.uint32_t(r.Block.Y), C.uint32_t(r.Block.Z)}
		c.thread = [3]C.uint32_t{C.uint32_t(r.Thread.X), C.uint32_t(r.Thread.Y), C.uint32_t(r.Thread.Z)}
		c.other_thread = [3]C.uint32_t{C.uint32_t(r.OtherThread.X), C.uint32_t(r.OtherThread.Y), C.uint32_t(r.OtherThread.Z)}
		c.address, c.access_size = C.uint64_t(r.Address), C.uint32_t(r.Size)
		if r.Write {
			c.write = 1
		}
		c.param_index, c.offset, c.buffer_size = C.int32_t(r.ParamIndex), C.int64_t(r.Offset), C.uint64_t(r.BufferSize)
		c.line, c.other_line = C.int32_t(r.Line), C.int32_t(r.OtherLine)
	}
	// SAFETY: out is copied into the thread's own storage during the call.
	C.capi_set_last_reports(&out[0], C.size_t(n), C.size_t(reps.Total))
}

// cstr copies s into dst as a NUL-terminated C string, cut to fit.
func cstr(dst []C.char, s string) {
	n := min(len(s), len(dst)-1)
	for i := 0; i < n; i++ {
		dst[i] = C.char(s[i])
	}
	dst[n] = 0
}

//export cubehip_last_check_reports
func cubehip_last_check_reports(out *C.cubehip_check_report, capacity C.size_t, count, total *C.size_t) C.cubehip_status {
	// It reads the last error and so leaves it as it is when it succeeds (no success());
	// a call it refuses has an error of its own, which replaces it.
	if count == nil || total == nil || (out == nil && capacity > 0) {
		return fail(argError("cubehip_last_check_reports: count or total is NULL, or out is NULL with cap > 0"))
	}
	if out != nil {
		for _, r := range unsafe.Slice(out, int(capacity)) {
			if r.size < C.size_t(unsafe.Offsetof(r.what)) {
				return fail(argError("cubehip_last_check_reports: out[i].size is not set: set it to sizeof(cubehip_check_report)"))
			}
		}
	}
	C.capi_get_last_reports(out, capacity, count, total)
	return statusSuccess
}
