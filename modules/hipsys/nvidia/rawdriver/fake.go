package rawdriver

// #include "rawdriver.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// FakeCall is one call the fake cuLaunchKernel recorded: the function, the first 8 bytes
// of its first argument (0 without arguments) and the OS thread that made it.
type FakeCall struct {
	Fn     uintptr
	Arg    uint64
	Thread uintptr
}

// FakeParam is one parameter the fake cuFuncGetParamInfo reports.
type FakeParam struct {
	Offset, Size uint64
}

// FakeLaunchEntry is the fake cuLaunchKernel's address, to stand where a queue calls
// the driver's: it records each call (FakeCalls) and refuses the function FakeReset
// names with CUDA_ERROR_INVALID_VALUE.
func FakeLaunchEntry() unsafe.Pointer { return C.rawd_fake_launch_entry() }

// FakeParamInfoEntry is the fake cuFuncGetParamInfo's address: every function's
// parameters are the layout FakeSetParams gave, and the function FakeReset names gets
// CUDA_ERROR_INVALID_CONTEXT.
func FakeParamInfoEntry() unsafe.Pointer { return C.rawd_fake_param_info_entry() }

// FakeReset clears the recording; from now on the fake entries refuse calls for
// function refuse, and every fake launch first sleeps delayUS microseconds.
func FakeReset(refuse uintptr, delayUS uint) { C.rawd_fake_reset(C.uintptr_t(refuse), C.uint(delayUS)) }

// FakeSetParams sets the layout the fake cuFuncGetParamInfo reports.
func FakeSetParams(params []FakeParam) error {
	if len(params) > C.RAWD_FAKE_PARAMS {
		return fmt.Errorf("rawdriver: %d fake parameters, at most %d", len(params), C.RAWD_FAKE_PARAMS)
	}
	offs := make([]C.uint64_t, len(params)+1)
	sizes := make([]C.uint64_t, len(params)+1)
	for i, p := range params {
		offs[i], sizes[i] = C.uint64_t(p.Offset), C.uint64_t(p.Size)
	}
	C.rawd_fake_set_params(&offs[0], &sizes[0], C.int(len(params)))
	return nil
}

// FakeCalls is the recording since the last FakeReset, in call order (the first
// RAWD_FAKE_MAX calls).
func FakeCalls() []FakeCall {
	n := min(int(C.rawd_fake_count()), C.RAWD_FAKE_MAX)
	out := make([]FakeCall, n)
	for i := range out {
		var fn, thread C.uintptr_t
		var arg C.uint64_t
		C.rawd_fake_call(C.int(i), &fn, &arg, &thread)
		out[i] = FakeCall{uintptr(fn), uint64(arg), uintptr(thread)}
	}
	return out
}

// ThreadSelf is the calling OS thread, as FakeCall.Thread names threads.
func ThreadSelf() uintptr { return uintptr(C.rawd_thread_self()) }
