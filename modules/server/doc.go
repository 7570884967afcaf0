// Package server runs HIP kernels on one device from Go: open a [Device], allocate
// [Buffer]s, write and read them, compile and launch [Kernel]s, capture work into a
// [Graph] and replay it, time work with a [Profile], and read the memory the device's
// pools hold.
//
//	dev, err := server.Open(server.Options{}) // amd, else nvidia, else the cpu device
//	defer dev.Close()
//
// A Device is safe from any number of goroutines. Its embedded [Stream] is stream 0;
// Device.On reaches the others. Work on one stream runs in order; streams order
// themselves on each buffer's last write, so a buffer written on one stream and read on
// another reads what was written.
//
// # Failures travel with the buffers
//
// Work on the device runs after the call that queued it has returned, so its failure
// cannot be that call's result. Instead, a failure of a write, a launch or a replay is
// carried by the buffers that work would have written: a carried failure. Reading such
// a buffer (Read, Sync with it, Check) returns the error that left it unwritten, never
// bytes that nothing wrote; a launch that reads it does not run, and its outputs carry
// the same failure on; rewriting the buffer (a Write, or a launch that writes it from
// clean inputs) clears it. Buffers the failed work did not touch are untouched. A call
// returns an error itself only when it was refused before anything ran: a released or
// foreign buffer, a malformed launch, a copy larger than its buffer. No call panics on
// bad input.
//
// # Layers
//
// The Device is a thin face over the compute server of package compute, which owns the
// streams, kernels, graphs, profiler and staging: the Device adds its lock, the checks
// that make a released or foreign buffer an error rather than a crash, and, on a
// platform with several devices, making the device current on the calling thread. A
// program needs only this package; the layers that build on the compute server itself
// (the C ABI, Python) import compute.
package server
