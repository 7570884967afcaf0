// Package cpu is the embedded default HIP device: the host CPU, implementing
// [hipsys.Platform] so that everything above hipsys, and every test, runs on a machine
// with no GPU. Importing it registers the platform as "cpu"; open it with
// hipsys.Open("cpu") (or "auto", which falls back to it).
//
// # What it owns
//
// Memory (host memory outside the Go heap, every pointer a call receives checked against
// the live allocations), streams (an in-order queue and worker each, the null stream
// with HIP's legacy rules), asynchronous failures (delivered as a GPU delivers a failed
// kernel, but not sticky), events, capture and graphs, several devices of one host
// (CUBEHIP_CPU_DEVICES), live counts for leak tests and device properties from cpuid:
// [Platform] says how each behaves, and where the cpu device parts from a GPU.
//
// It does not own kernel compilation, loading or execution: hiprtc and modules are
// package [github.com/cubehip/cubehip/modules/hipsys/cpu/jit], which this package calls
// on the stream workers.
//
// A kernel runs in this process, and one that faults ends its launch, not the process;
// [Platform] says how that is reported, and package jit how faults are caught.
//
// # Concurrency
//
// Every method is safe for concurrent use. Ordering between calls made concurrently
// from different goroutines is whatever order they take the stream's lock in, as it is
// for host threads on a GPU.
//
// # Imports
//
// hipsys, hipsys/cpu/jit, golang.org/x/sys/unix and klauspost/cpuid; nothing above
// hipsys.
package cpu
