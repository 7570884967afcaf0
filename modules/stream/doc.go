// Package stream owns what the HIP server keeps per device stream and across streams:
// the mapping of stream ids onto device streams ([MultiStream]), the order between
// streams, the failure store and its write scopes, the capture window, the metadata
// info cache, the drop queue that keeps host buffers alive for the device, and the
// hipsys-backed storage under the memory managers.
//
// It deliberately does not own kernels, compilation or profiling (package server does),
// nor the pools themselves (package memory).
//
// Import rule: stream imports hipsys and memory, and no other module of ours; server
// imports it.
//
// Entry point: New(platform) returns a MultiStream. Every server call resolves a command
// with Resolve(streamID, bindings), which creates the stream lazily, makes it wait for
// the last writer of each buffer on another stream and pins buffers borrowed from other
// streams' pools until the command's work is done; Close the result once the work is
// enqueued. Work that writes device memory runs inside a write scope (Over, Launching),
// which settles the failure store: a failure lands on the buffers the failed work would
// have written, and surfaces when they are read, from any stream. The capture window is
// Stream.PrepareCapture, BeginCapture and Instantiate; Captures holds the graphs,
// replays them and destroys them.
//
// Deliberate changes from CubeCL, each marked "Differs from CubeCL" where it lives:
// ordering follows a buffer's last write, not its allocation cursor (order.go);
// lifetimes are explicit references, released by a worker waiting on events, never by
// the garbage collector (release.go); a failure is carried per allocation
// (failures.go); nothing panics on bad input: stream creation and fence failures are
// returned.
//
// Concurrency: a MultiStream may be used by several goroutines as long as each drives
// distinct streams; everything reachable from one *Stream belongs to the goroutine
// driving it. The failure store, the write order and stream creation are safe for
// concurrent use. No fence wait, drop-queue flush or deferred free runs while its stream
// records a capture; an allocation that misses the pools the prepare run warmed still
// reaches the driver (hipMalloc, or hipHostMalloc and its stream sync), as in CubeCL,
// which invalidates the capture and makes end_capture refuse the graph.
package stream
