// Package cpu is the embedded default HIP device: the host CPU, implementing
// [hipsys.Platform] so that everything above hipsys, and every test, runs on a machine
// with no GPU. Importing it registers the platform as "cpu"; open it with
// hipsys.Open("cpu") (or "auto", which falls back to it).
//
// # What it owns
//
//   - Memory. Device memory is host memory outside the Go heap (C aligned_alloc for
//     small blocks, mmap from 1 MiB), 256-byte aligned. Every pointer a call receives is
//     checked against a sorted table of live allocations: an unknown, freed or
//     wrong-kind pointer, or a range that runs past its allocation, is
//     hipErrorInvalidValue; interior pointers are valid. The device's memory is the
//     host's RAM (MemGetInfo), and Malloc beyond what is free is hipErrorOutOfMemory.
//     Async copies and the host side of 2D copies must use pinned memory from
//     HostMalloc. Free and HostFree first wait for all queued work, as hipFree does.
//   - Streams. Each stream is an in-order queue with one worker goroutine; copies,
//     memsets, launches, event records and waits are queued and return at once. The
//     null stream is a real stream, created on first use, and follows HIP's legacy
//     rules: its work runs after work already queued on blocking streams (those
//     created without StreamNonBlocking) and theirs after its. Blocking copies and
//     memsets (Memset, MemcpyHtoD, ...) run on the calling goroutine after that work.
//   - Asynchronous errors. A command that fails on the worker (a kernel launch that
//     package jit reports failed) is remembered by its stream and returned, once, by
//     the stream's next StreamSynchronize (or the next DeviceSynchronize); later work
//     on the stream still runs.
//   - Events, stamped with Go's monotonic clock when the worker reaches the record.
//   - Capture and graphs: a capturing stream records its commands as graph nodes
//     (Kernel, Memcpy, Memset, EventRecord, WaitEvent) in one chain; instantiate copies
//     them and GraphLaunch queues them all as one unit. The calls HIP forbids during a
//     capture (StreamSynchronize or StreamQuery on the capturing stream; Malloc, Free,
//     HostFree, blocking copies and memsets, DeviceSynchronize during a global-mode
//     capture, or a thread-local one begun on the calling OS thread) fail with
//     hipErrorStreamCaptureUnsupported and invalidate the capture.
//   - Device properties from cpuid: the CPU's brand string, "x86-64-vN", logical cores
//     as multiprocessors, warp size 1.
//
// It does not own kernel compilation, loading or execution: hiprtc and modules are
// package [github.com/cubehip/cubehip/modules/hipsys/cpu/jit], which this package calls
// on the stream workers.
//
// A kernel runs in this process: one that writes out of bounds corrupts or crashes the
// host process, which no status can report. Kernel pointer arguments are not checked.
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
