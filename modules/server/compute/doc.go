// Package compute is the HIP compute server, CubeCL's HipServer in Go: one device's
// streams, kernels and their compile cache, captured graphs, the event profiler and the
// pinned staging that copies between Go memory and the device. It is the layer the
// user package (server, whose Device is a thread-safe face over one Server) stands on,
// as database/sql stands on database/sql/driver: programs, the C ABI and the Python
// package import server; a layer that needs the Server's single-owner method set itself
// imports compute.
//
// # What it owns
//
//   - [Server]: every method of CubeCL's server, with its order, errors and failure
//     tracking (allocation, staging, read, write, launch, sync, graph capture, profiling,
//     memory reports and modes).
//   - Kernels ([Kernel]): HIP C++ source and its entry point; the kernels of one source
//     and options are one module ([ModuleID]), compiled once per device architecture and
//     kept in memory and on disk ([EnvCacheDir]; diskcache.go says how an entry is keyed
//     and checked). Each kernel declares the access of each buffer parameter; that is
//     what the write scopes check and claim.
//   - The copies between Go memory and the device, through pinned staging
//     ([Server.Staging]) but for a small read of an idle stream.
//   - What the server infers about each device stream that the driver does not say
//     (internal/ledger): whether it is idle, which call carries a completion flag, which writes no
//     wait has confirmed; never inferred for a stream anything outside may queue on.
//   - The launch queue (launchqueue.go): on a platform that has one, a launch on the
//     fast path is issued by a platform thread, and every other call first settles it.
//
// It deliberately does not own the streams' order, the failure store, the capture
// state or the info cache (package stream), nor the pools (package memory).
//
// # Failures
//
// A failure of work that writes device memory is carried by the buffers that work
// would have written, and returned by whatever later reads them; the call that enqueued
// the work does not return it. Nothing panics on bad input: CubeCL's panics are errors
// here, carried like any other, and each method says where it differs from CubeCL.
//
// Where CubeCL leaves a question open (a Sync during a capture, an unknown LaunchMode,
// a copy descriptor whose arithmetic overflows, where an asynchronous device fault lands),
// the method decides and says so; docs/architecture.md lists the decisions.
//
// # Concurrency
//
// A Server has one owner at a time (Config.Owner is its lock). The futures it returns
// (ReadFuture, WriteFuture, SyncFuture, ProfileFuture) may be waited on from any
// goroutine; a read or write larger than the staging ring's free chunks takes the
// owner's lock from its Wait to queue each further chunk.
package compute
