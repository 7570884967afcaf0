//go:build !cubehip_release

package main

/*
#cgo LDFLAGS: -lpthread
#include "capi.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// benchOp is one of the calls the ABI's benchmarks time on both sides of the ABI.
type benchOp int

const (
	benchSize benchOp = iota
	benchCheck
	benchLaunch
	benchLaunchSync
	benchRead4
	benchWrite4
	benchAllocRelease
	benchProfile
	benchSync
	benchOps               // the ops BenchmarkABI pairs with the Device's own calls
	benchReplay = benchOps // a graph's replay: paired with the raw driver only
)

var benchNames = [...]string{"buffer_size", "buffer_check", "launch", "launch+sync", "read 4 B", "write 4 B", "alloc+release 1 KiB", "profile start+stop", "device_sync", "replay"}

func (o benchOp) String() string { return benchNames[o] }

// benchC runs n calls of op on the bench thread (a C thread the Go runtime never started,
// one for the process), through the ABI,
// and returns the nanoseconds per call (a float: a cheap call takes under one).
func benchC(op benchOp, dev, buf, kern uint64, n int) (float64, error) {
	return benchCGraph(op, dev, buf, kern, 0, n)
}

// benchCGraph is benchC with a graph, for benchReplay.
func benchCGraph(op benchOp, dev, buf, kern, graph uint64, n int) (float64, error) {
	var st C.cubehip_status
	ns := C.capi_bench_run(C.int(op), C.uint64_t(dev), C.uint64_t(buf), C.uint64_t(kern), C.uint64_t(graph), C.int(n), &st)
	if st != 0 {
		return 0, fmt.Errorf("%s from C: %s: %s", op, abiStatusName(st), lastError())
	}
	return float64(ns), nil
}

// onBenchThread runs the C function fn (void fn(void*)) with arg on the bench thread,
// the thread benchC's loops run on: a rawdriver.Runner. Where that thread could not be
// started fn never runs, and the loop reports the status its job was made with.
func onBenchThread(fn, arg unsafe.Pointer) { C.capi_bench_call((*[0]byte)(fn), arg) }

// pinned runs f with the calling goroutine on one OS thread, and that thread and the C
// thread that runs benchC's loops pinned to the core it is on: a pair's sides then differ
// by what they call, not by where they run. It returns the core, or -1 when the
// platform would not pin (f runs all the same).
func pinned(f func()) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := int(C.capi_bench_pin())
	defer C.capi_bench_unpin()
	f()
	return cpu
}

// benchGo runs n of the same calls on the Device itself, from Go: the side without the ABI.
func benchGo(op benchOp, dev, buf, kern uint64, n int) (float64, error) {
	d, err := lookup[*device](dev, kindDevice)
	if err != nil {
		return 0, err
	}
	b, err := lookup[*buffer](buf, kindBuffer)
	if err != nil {
		return 0, err
	}
	k, err := lookup[*kernel](kern, kindKernel)
	if err != nil {
		return 0, err
	}
	s := d.d.On(0)
	one := b.b.Arg()
	var word [4]byte
	grid := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	t0 := time.Now()
	for i := 0; i < n && err == nil; i++ {
		switch op {
		case benchSize:
			_ = b.b.Size()
		case benchCheck:
			err = s.Check(b.b)
		case benchLaunch:
			err = s.Call(k.k, grid, one)
		case benchLaunchSync:
			if err = s.Call(k.k, grid, one); err == nil {
				err = s.Sync()
			}
		case benchRead4:
			err = s.ReadInto(word[:], b.b)
		case benchWrite4:
			err = s.Write(b.b, word[:])
		case benchAllocRelease:
			var nb *server.Buffer
			if nb, err = s.Alloc(1024); err == nil {
				err = nb.Release()
			}
		case benchProfile:
			var p *server.Profile
			if p, err = s.StartProfile(); err == nil {
				_, err = p.Stop()
			}
		case benchSync:
			err = s.Sync()
		}
	}
	if err == nil && op == benchLaunch {
		err = s.Sync()
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n), err
}
