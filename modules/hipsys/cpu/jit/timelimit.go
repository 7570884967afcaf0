package jit

/*
#include <stdlib.h>
#include "fault.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// timeLimit is the cpu device's per-launch time limit in nanoseconds; 0 is none.
var timeLimit atomic.Int64

// ParseTimeLimit reads a time limit as $CUBEHIP_CPU_TIME_LIMIT gives it: a Go duration
// ("10s", "1m30s"); "", "0" and "off" are none.
func ParseTimeLimit(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "0" || v == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", v)
	}
	return d, nil
}

// SetTimeLimit sets the time a launch may run before it ends with hipErrorLaunchTimeOut
// (0: none, the default; the cpu platform sets it from $CUBEHIP_CPU_TIME_LIMIT when it
// opens). It applies to launches that start after it. A limit needs the fault handlers:
// with $CUBEHIP_CPU_CATCH_FAULTS=0 launches run unlimited.
func SetTimeLimit(d time.Duration) { timeLimit.Store(int64(max(d, 0))) }

// TimeLimit is the limit SetTimeLimit set.
func TimeLimit() time.Duration { return time.Duration(timeLimit.Load()) }

// resendEvery is how often an expired launch's threads are signalled again until it
// returns: a thread may have been where the signal waits (the grid's barrier).
const resendEvery = 10 * time.Millisecond

// launchLimit is one launch's time limit in flight.
type launchLimit struct {
	stop  *C.cubehip_stop
	limit time.Duration
	mu    sync.Mutex
	done  bool
	timer *time.Timer
}

// startLimit arms the time limit of a launch about to start; nil when there is none.
func startLimit() *launchLimit {
	d := time.Duration(timeLimit.Load())
	if d <= 0 || !CatchFaults {
		return nil
	}
	l := &launchLimit{stop: C.cubehip_stop_new(), limit: d}
	if l.stop == nil {
		return nil
	}
	l.timer = time.AfterFunc(d, l.fire)
	return l
}

func (l *launchLimit) fire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	C.cubehip_stop_fire(l.stop)
	l.timer.Reset(resendEvery)
}

// cStop is the limit for cubehip_run: NULL for none.
func (l *launchLimit) cStop() *C.cubehip_stop {
	if l == nil {
		return nil
	}
	return l.stop
}

// end disarms the limit once the launch has returned.
func (l *launchLimit) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.done = true
	l.timer.Stop()
	l.mu.Unlock()
	C.cubehip_stop_free(l.stop)
}

// timeoutError is the error of a launch of kernel name that its time limit ended.
func timeoutError(name string, f *C.cubehip_fault, limit time.Duration) error {
	return hipsys.NewError("cpu", callLaunch, hipsys.ErrorLaunchTimeOut, fmt.Sprintf(
		"kernel %s ran past the cpu device's time limit of %v (CUBEHIP_CPU_TIME_LIMIT, jit.SetTimeLimit), stopped in blocks [%d, %d); the launch ended there",
		name, limit, uint64(f.first), uint64(f.end)))
}
