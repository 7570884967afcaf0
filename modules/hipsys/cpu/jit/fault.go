package jit

/*
#include <signal.h>
#include "fault.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// CatchFaults is whether a kernel that faults ends its launch rather than the process:
// true unless $CUBEHIP_CPU_CATCH_FAULTS is 0 when the process starts. Turning it off
// leaves the signal to Go's runtime, which crashes the process (with a core dump under
// GOTRACEBACK=crash), for a debugger to see the kernel's own frames.
var CatchFaults = catchFaultsFromEnv(os.Getenv("CUBEHIP_CPU_CATCH_FAULTS"))

func catchFaultsFromEnv(v string) bool { return strings.TrimSpace(v) != "0" }

var installOnce sync.Once

// installFaultHandlers puts fault.c's handlers in front of Go's at the first launch, not
// at package initialization: a program that imports the platform and never launches keeps
// its signal handlers exactly as Go left them.
func installFaultHandlers() {
	installOnce.Do(func() {
		on := C.int(0)
		if CatchFaults {
			on = 1
		}
		C.cubehip_faults_install(on)
	})
}

// faultError is the error of a launch that kernel name ended with fault: the status a
// GPU gives for the same fault, and what the signal says happened, where, in which blocks.
func faultError(name string, f *C.cubehip_fault) error {
	status := hipsys.ErrorLaunchFailure
	var what string
	switch f.signal {
	case C.SIGSEGV:
		status = hipsys.ErrorIllegalAddress
		what = fmt.Sprintf("an illegal memory access at %#x (SIGSEGV)", uint64(f.addr))
	case C.SIGBUS:
		status = hipsys.ErrorIllegalAddress
		what = fmt.Sprintf("an illegal memory access at %#x (SIGBUS: no memory behind a mapped address)", uint64(f.addr))
	case C.SIGFPE:
		what = "an arithmetic fault (SIGFPE)"
		switch f.code {
		case C.FPE_INTDIV:
			what = "an integer division by zero (SIGFPE)"
		case C.FPE_INTOVF:
			what = "an integer division overflow (SIGFPE)"
		}
	case C.SIGILL:
		what = "__trap() or an illegal instruction (SIGILL)"
	case C.SIGABRT:
		what = "abort() or a failed assert (SIGABRT)"
	default:
		what = fmt.Sprintf("signal %d", int(f.signal))
	}
	return hipsys.NewError("cpu", callLaunch, status, fmt.Sprintf("kernel %s faulted: %s in blocks [%d, %d) of the launch; the launch ended there",
		name, what, uint64(f.first), uint64(f.end)))
}
