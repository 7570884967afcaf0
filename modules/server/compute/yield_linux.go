package compute

import (
	"runtime"
	"syscall"
)

// yield gives the core to any other runnable goroutine, then to any other thread of
// the machine (sched_yield), before a copy team's poll goes on: a poll that kept its
// thread busy would take the core from whatever runs beside it when the machine's
// cores are oversubscribed. On an idle core sched_yield returns at once.
func yield() {
	runtime.Gosched()
	_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}
