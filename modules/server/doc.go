// Package server runs HIP kernels on one device from Go: open a [Device], allocate
// [Buffer]s, write and read them, compile and launch [Kernel]s, capture work into a
// [Graph] and replay it, time work with a [Profile], and read the memory the device's
// pools hold.
//
//	// extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
//	dev, err := server.Open(server.Options{}) // amd, else nvidia, else the cpu device
//	defer dev.Close()
//	saxpy := server.DefineKernel(source, "saxpy") // 256 threads a block; x read, y read and written
//	x, err := server.UploadSlice(dev.Stream, xs)  // a []float32
//	y, err := server.UploadSlice(dev.Stream, ys)
//	err = dev.Call(saxpy, server.Dim3{X: uint32(n+255) / 256}, n, float32(2), x, y)
//	err = server.ReadSliceInto(dev.Stream, ys, y)
//
// The package's Example is that program in full, every error checked.
//
// Importing server registers every platform (amd, nvidia, cpu), so Open needs no other
// import. Build with the tag cubehip_noplatforms to leave them out and import only the
// platform packages you want (github.com/cubehip/cubehip/modules/hipsys/cpu, amd,
// nvidia), or pass a platform you opened yourself to OpenPlatform.
//
// # Arguments
//
// Call takes a kernel's arguments in the order its C signature declares them, as plain
// Go values: a *Buffer or a View (a range of one) for a pointer, Go numbers for scalars,
// each converted to the parameter's C type as the source declares it, exactly (an int
// that does not fit an int parameter is an error; a float64 for a float is rounded as
// C++ rounds it). An Arg (I8 ... F64, Struct for a by-value struct, Info for the info
// pointer) passes a value of exactly the type it names. Launch takes Args in CubeCL's
// order instead (buffers, scalars, info). A launch whose arguments do not fit the
// kernel's parameters, as the source declares them and as the platform lists the
// compiled kernel's (their count, a width, a buffer where the kernel takes a value), is
// refused with an error naming the parameter ("launch saxpy: argument 1 (a): a buffer
// given, the kernel takes float a"); so is a launch configuration the device cannot run
// (block, shared memory, grid limits, a grid with no blocks). A refused launch queues
// nothing and changes no buffer.
//
// # Shapes and defaults
//
// A grid or block is a Dim3 whose zero Y or Z is 1, so Dim3{X: n} is n×1×1. A grid
// with X == 0 is an error, never a silent launch of nothing: to launch nothing for an
// empty input, skip the call. A kernel built without Block runs in blocks of
// 256×1×1 threads (as in C and Python), and without IO takes each buffer's access from its
// declaration: a const T* parameter is only read, any other pointer read and written.
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
// A Sync of a stream while it records a capture (between BeginCapture and EndCapture,
// or inside Capture's function) is refused with an error wrapping
// stream.ErrGraphState, and the capture goes on: the recorded work runs only when the
// graph is replayed, so a Sync then has nothing to wait for and a nil would claim work
// had run that has not. Sync after EndCapture, or after Replay.
//
// A device fault is reported late: a kernel that traps or reads out of bounds on a
// GPU (on the cpu device, a command that fails on its worker) returns nothing to the
// launch that queued it, and the device reports the fault at the next wait that goes
// past it, without saying which work failed. So a wait that succeeds (a Sync, or the
// wait for a staging chunk inside a Read or Write) confirms every write, launch and
// replay queued on its stream before it, and a wait that fails fails the call that
// waits and leaves every buffer written on that stream since its last successful wait
// carrying the failure: the faulted work's outputs, and the outputs of work queued
// after it, whose bytes the device may not have produced (a GPU's fault ends its
// context for good; the cpu device recovers once the fault is reported). None of them
// returns bytes that nothing wrote; a buffer a Sync confirmed, and every input, keeps
// its bytes. Sync after work whose failure should stay its own.
//
// # Layers
//
// The Device is a thin face over the compute server of package compute, which owns the
// streams, kernels, graphs, profiler and staging: the Device adds its lock, the checks
// that make a released or foreign buffer an error rather than a crash, and, on a
// platform with several devices, making the device current on the calling thread. A
// program needs only this package, and so do the layers built on it: the C ABI
// (modules/capi) imports this package, with hipsys and memory for their statuses and
// allocation modes, never compute; the Python package calls the C ABI's library.
package server
