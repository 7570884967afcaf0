// Package nvidia is HIP's NVIDIA mapping, done in Go: the hipsys.Platform API on the CUDA
// driver API (libcuda.so.1) and, for hiprtc, NVRTC (libnvrtc.so, versions 13 down to
// 11). HIP on NVIDIA is header-only in ROCm, so there is no HIP library to load; each
// call here is what HIP's nvidia_hip_runtime_api.h does (hipModuleLaunchKernel is
// cuLaunchKernel, hipHostMalloc is cuMemHostAlloc, hipMemcpy2DAsync is
// cuMemcpy2DAsync, ...), and each CUresult becomes the hipError_t HIP's own
// hipCUResultTohipError gives, with the CUresult's name in the error's Detail.
//
// Entry point: importing the package registers the platform as "nvidia";
// hipsys.Open("nvidia") (or "auto") calls Open. Both libraries are opened with dlopen, so
// a build needs only Go and a C compiler, no CUDA headers. Without libcuda.so.1, Open
// fails with an error naming it (wrapping dl.ErrNotFound), and auto moves on. NVRTC is
// opened at the first hiprtc call.
//
// [Platform] gives the detail of each part: contexts (each device's primary context,
// made current per OS thread), hiprtc (an in-memory <hip/hip_runtime.h> over NVRTC; CUBIN
// for the device's own architecture), handles (checked against live tables, since the
// driver dereferences what it is given), capture's OS-thread tie, kernel parameters
// (checked at every launch, since a short argument list crashes the driver), the launch
// queue (hipsys.LaunchQueuer: a ring a C thread of the device's own empties into the
// driver) and completion flags (hipsys.FlaggingQueue: a stream write after a launch that
// a wait spins on).
//
// The cgo boundary is trampolines.c (one C function per driver or NVRTC call, its
// prototypes in trampolines.h, ffi.go's one #cgo block) and queue.c (the queue's
// thread); driver.h and nvrtc.h declare what cubehip calls of the two libraries, one
// function-pointer type per call signature. Package rawdriver holds what only tests and
// benchmarks use: the raw driver's loops in C (the anchor the benchmarks pair with) and
// recording stand-ins for driver entries. bench/ has the anchor as a C program and
// run.sh, which scripts/gpu-test.sh copies to build/gpu for a GPU machine.
//
// Concurrency: the Platform is safe for concurrent use, as the driver is.
package nvidia
