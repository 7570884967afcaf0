// Package faults is a hipsys.Platform that wraps another and makes chosen HIP calls
// fail, so that every failure path above hipsys (a launch that fails, an allocation that
// runs out of memory, a compile that breaks) can be tested on any platform, the cpu one
// included, without a broken device.
//
// Entry point: w := faults.Wrap(p). Calls are named by HIP's C name, the same string a
// platform puts in hipsys.Error.Call ("hipMalloc", "hipModuleLaunchKernel",
// "hiprtcCompileProgram"); each method of hipsys.Platform is exactly one such call
// ("hip" or "hiprtc" followed by the method's name). A rule is armed per call:
//
//	w.Fail("hipMalloc", hipsys.ErrorOutOfMemory)                 // every call, until cleared
//	w.FailNth("hipModuleLaunchKernel", 3, hipsys.ErrorLaunchFailure) // the 3rd call from now, once
//	w.FailNext("hipMemcpyHtoDAsync", 2, hipsys.ErrorInvalidValue)    // the next 2 calls
//	w.Clear("hipMalloc"); w.Reset()
//
// A failing call returns *hipsys.Error{Platform: the wrapped platform's name, Call, Status
// (or RTCStatus for a hipsys.RTCStatus), Detail: "injected fault"} and does not reach the
// wrapped platform, so it has no side effect: an injected hipMalloc failure allocates
// nothing, an injected launch writes nothing. Calls(name) counts the calls the wrapper
// has seen, failed or not, so a test can assert that a call did or did not happen.
//
// The wrapper has every optional capability of hipsys (hipsys.As finds the wrapper's,
// never the wrapped platform's, so no call gets past the rules), each answering as the
// wrapped platform would: its launch queue (emulated over a platform without one), its
// flags and staged small reads where it has them. Their calls have names of their own:
// hipOpenLaunchQueue, and the flagged variants hipModuleLaunchKernelFlagged,
// hipMemcpyDtoHAsyncFlagged and hipStreamWaitFlag, each of which also counts as the call
// it is a variant of (hipModuleLaunchKernel, hipMemcpyDtoHAsync, hipStreamSynchronize)
// and is failed by that call's rule too.
//
// Live counts what was created through the wrapper and not yet destroyed through it
// (streams, events, allocations and their bytes, modules, graphs, executable graphs,
// programs), on whatever platform it wraps, for leak tests.
//
// It owns only the rules, the call counters and the live counts; it deliberately does not model HIP's sticky
// errors (a real launch failure poisons the context; an injected one does not).
//
// Concurrency: every method is safe for concurrent use. With no rule armed a call costs
// one atomic add (the counter) and one atomic load before it reaches the wrapped
// platform, and a create or destroy call a mutex and a map update after it; arming and
// disarming take a mutex.
package faults
