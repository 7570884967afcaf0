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
// # Where the detail is
//
//   - Arguments: [Stream.Call] takes them in the order of the kernel's C signature, as
//     plain Go values converted to each declared parameter type exactly, or as [Arg]s;
//     its doc lists the conversions and what a launch refuses.
//   - Shapes and defaults: a [Dim3]'s zero Y or Z is 1; [DefineKernel] gives a kernel's
//     default block and the buffer accesses read from its declaration.
//   - Streams: a [Device] is safe from any number of goroutines; its embedded [Stream] is
//     stream 0, [Device.On] reaches the others, and streams order themselves on each
//     buffer's last write.
//   - Failures travel with the buffers: work that fails on the device is carried by the
//     buffers it would have written, and returned by their next Read, Sync or Check;
//     [Stream.Check] says how, and how a late device fault is reported. No call panics
//     on bad input.
//   - Layers: the Device is a thin face over package compute's server;
//     docs/architecture.md in the repository shows what a launch and a read go through.
package server
