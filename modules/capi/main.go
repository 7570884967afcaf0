// Command capi is libcubehip.so: the C ABI of cubehip (include/cubehip.h), built with
// -buildmode=c-shared by scripts/build-capi.sh. It is a thin layer over the Device of
// package server: every exported function looks its handles up in a registry of typed
// ids, checks its arguments, calls the Device, and turns the result into a status and the
// calling thread's last error. No Go pointer ever crosses to C: a host holds ids, and
// every byte a host passes in is copied before the function returns.
package main

import (
	_ "github.com/cubehip/cubehip/modules/hipsys/platforms" // cpu, nvidia and amd, as the C ABI promises
)

// main is never run: a c-shared library's Go runtime starts when the library is loaded.
func main() {}
