// Package server is the HIP compute server (CubeCL's HipServer, the seed) in Go: one
// device's streams, kernels and their compile cache, captured graphs and the event
// profiler, and the thread-safe Device that Go users, the C ABI and Python stand on.
//
// # What it owns
//
//   - [Server]: every method of the seed, with its order, errors and taint behaviour
//     (reference/semantics.md §1, §2, §5): allocation (NewHandle, InitializeMemory),
//     staging, read, write, launch, check, flush, sync, the graph capture window
//     (GraphPrepare, BeginCapture, EndCapture, Replay, GraphDestroy), the profiler
//     (StartProfile, EndProfile, AbandonProfile), memory usage, report, cleanup,
//     allocation mode, pool installation, stream ids and GetResource.
//   - Kernels ([Kernel]): HIP C++ source with an `extern "C" __global__` entry point,
//     identified by the hash of source, entry and options, compiled once per device
//     architecture through hiprtc, kept in memory and on disk ($CUBEHIP_CACHE_DIR, else
//     cubehip under os.UserCacheDir()) so a second process loads the code object
//     without compiling. Each kernel declares the access of each buffer parameter; that
//     is the IO the write scopes use.
//   - The copies between Go memory and the device: always through pinned staging
//     (DESIGN §Semantics 5), with a heap fallback when pinned memory runs out.
//
// It deliberately does not own the streams' order, the failure store, the capture
// state or the info cache (package stream), nor the pools (package memory).
//
// # Failures
//
// A failure of work that writes device memory is carried by the buffers that work
// would have written, and returned by whatever later reads them, from any stream; the
// call that enqueued the work does not return it. Deliberate changes from CubeCL are
// marked "Differs from CubeCL" where they live; the main one is that nothing panics on
// bad input: initialize_memory's failure is returned to the allocating caller, and
// CubeCL's panics on malformed descriptors, pinned-staging exhaustion and failed
// driver copies are errors carried like any other.
//
// # Imports
//
// server imports hipsys, memory and stream; nothing imports server but capi and
// cmd/cubehip.
//
// # Concurrency
//
// A Server has one owner at a time. The futures it returns (ReadFuture, SyncFuture,
// ProfileFuture) may be waited on from any goroutine, outside that ownership. The
// Device serializes access to its Server and may be used from any number of
// goroutines.
package server
