package nvidia

// #include "trampolines.h"
import "C"

import "unsafe"

// The hooks of the package's tests that need C, which a _test.go file cannot use: they
// drive the launch queue and FuncGetParams over package rawdriver's fake entries, on
// machines without a GPU.

// settleCurrent settles the calling thread's current device's queue, as every
// trampoline does first, without making a context current; swapDevice sets the calling
// thread's current device without a context and returns the one before. The queue's
// tests drive a device no machine has, whose context does not exist.
func settleCurrent()       { C.cu_settle_current() }
func swapDevice(d int) int { return int(C.cu_swap_dev(C.int(d))) }

// swapParamInfoEntry puts entry where the driver's cuFuncGetParamInfo is called (nil:
// none, an older driver) and returns the one before.
func swapParamInfoEntry(entry unsafe.Pointer) unsafe.Pointer {
	f := entryAddr(&C.cubehip_cu.funcGetParamInfo)
	old := *f
	*f = entry
	return old
}

// swapNameEntries puts add and lowered where NVRTC's nvrtcAddNameExpression and
// nvrtcGetLoweredName are called (nil: a library without them) and returns the ones
// before: the name expression tests run over rawdriver's fakes, with no NVRTC.
func swapNameEntries(add, lowered unsafe.Pointer) (oldAdd, oldLowered unsafe.Pointer) {
	a, l := entryAddr(&C.cubehip_nvrtc.addNameExpression), entryAddr(&C.cubehip_nvrtc.getLoweredName)
	oldAdd, oldLowered = *a, *l
	*a, *l = add, lowered
	return oldAdd, oldLowered
}
