// Command crossing (built with -buildmode=c-shared, run by host/host.c) measures what the
// Go runtime alone costs a C host that calls into a Go library for a driver-bound call:
// the floor under any c-shared library's overhead, cubehip's included. The library's
// exports do nothing but make the driver call the raw loop makes (one cgo call each); the
// host times, in one process, the raw driver loop from C against the same loop through
// them, round by round. docs/benchmarks.md has the figures.
package main

// #include "crossing.h"
import "C"

var calls uint64 // so that the exports are not empty

//export crossing_noop
func crossing_noop() C.int {
	calls++
	return 0
}

//export crossing_launch
func crossing_launch() C.int {
	calls++
	return C.crossing_driver_launch()
}

//export crossing_sync
func crossing_sync() C.int {
	calls++
	return C.crossing_driver_sync()
}

func main() {}
