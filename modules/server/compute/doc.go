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
//     tracking: allocation (NewHandle, InitializeMemory, Empty, Create), staging, read,
//     write, launch, check, flush, sync, the graph capture window (GraphPrepare,
//     BeginCapture, EndCapture, Replay, GraphDestroy), the profiler (StartProfile,
//     EndProfile, AbandonProfile), memory usage, report, cleanup, allocation mode, pool
//     installation, stream ids and GetResource.
//   - Kernels ([Kernel]): HIP C++ source with a `__global__` entry point (an `extern "C"`
//     name or a C++ name expression), identified by the hash of source, entry and options;
//     the kernels of one source and options are one module ([ModuleID]), compiled once per
//     device architecture through hiprtc, kept in memory and on disk ($CUBEHIP_CACHE_DIR, else
//     cubehip under os.UserCacheDir()) so a second process loads the code object
//     without compiling. A disk entry is also keyed by the compiler's code identity
//     (hipsys.CodeIdentifier) and checked against its SHA-256 before it is loaded, in a
//     directory only the user can write (diskcache.go). Each kernel declares the access of each buffer parameter; that
//     is what the write scopes check and claim.
//   - The copies between Go memory and the device: always through pinned staging (see
//     [Server.Staging] for its two forms), never straight from pageable memory, except a
//     small read of a stream the driver or the server's own counts show idle, which is
//     one blocking copy.
//   - What the server infers about each device stream that the driver does not say
//     (streamstate.go): whether it is idle, which call carries a completion flag, which
//     writes no wait has confirmed. One state per device stream, shared by the logical
//     ids mapped onto it; a stream anything outside the server may queue on (its native
//     handle handed out, memory imported on it) is never inferred idle, and every wait on
//     it is the driver's.
//   - The launch queue (launchqueue.go): on a platform that has one, a launch on the
//     fast path is issued by a platform thread, and every other call first settles it.
//
// It deliberately does not own the streams' order, the failure store, the capture
// state or the info cache (package stream), nor the pools (package memory).
//
// # Failures
//
// A failure of work that writes device memory is carried by the buffers that work
// would have written, and returned by whatever later reads them, from any stream; the
// call that enqueued the work does not return it. Where this package differs from
// CubeCL the method says so; the main difference is that nothing panics on bad input:
// initialize_memory's failure is returned to the allocating caller, and CubeCL's panics
// on malformed descriptors, pinned-staging exhaustion and failed driver copies are
// errors carried like any other.
//
// Decided where CubeCL leaves the question open:
//
//   - A Sync of a stream recording a capture is refused (stream.ErrGraphState); the
//     capture is untouched (see [Server.Sync]).
//   - A [LaunchMode] other than Execute and DryRun is a malformed launch
//     (ErrInvalidArgument): nothing is queued and no buffer is touched.
//   - A [CopyDescriptor] whose element count, byte count, row pitch or device span
//     overflows 64 bits is ErrUnsupportedStrides naming its shape, checked before the
//     bounds, which wrapped arithmetic would pass.
//   - An asynchronous device fault (reported by a later wait, not by the call that
//     queued the work) lands on every buffer written, launched into or replayed into
//     on the wait's device stream, by any logical id mapped onto it, since that
//     stream's last successful wait (a Sync, or the wait for a staging chunk), never on
//     a buffer such a wait confirmed; the wait
//     fails the call that waits, and the fault is then acknowledged with a stream
//     synchronization, so a device that recovers runs the stream's later work.
//
// # Concurrency
//
// A Server has one owner at a time (Config.Owner is its lock). The futures it returns
// (ReadFuture, WriteFuture, SyncFuture, ProfileFuture) may be waited on from any
// goroutine; a read or write larger than the staging ring's free chunks takes the
// owner's lock from its Wait to queue each further chunk.
package compute
