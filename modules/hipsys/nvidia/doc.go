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
// Contexts: Open retains every device's primary context (the one the CUDA runtime uses
// too). As in HIP, the current device belongs to the calling OS thread (0 until
// SetDevice); every call that needs a context makes that device's primary context current
// first, through a per-thread cache in C, so cuCtxSetCurrent is paid only when a
// goroutine lands on a thread whose context differs. Code that switches contexts behind
// cubehip's back on the same thread defeats the cache.
//
// hiprtc: programs get an in-memory <hip/hip_runtime.h> (and hip_fp16.h, hip_bf16.h) so
// unmodified HIP kernel source compiles: HIP's spellings (hipThreadIdx_x,
// HIP_DYNAMIC_SHARED, unmasked __shfl*, __ballot, __any, __all) map to CUDA's. Code is
// built as CUBIN for the device's own SM (sm_90 on an H200), or as PTX for the newest
// architecture NVRTC knows when NVRTC is older than the device. HIP-on-AMD options that
// mean nothing here (--offload-arch, -O3, -mwavefrontsize64, ...) are dropped. NVRTC has
// no cuda_fp16.h of its own: hip_fp16.h and hip_bf16.h need the toolkit's include folder
// ($CUDA_HOME, $CUDA_PATH or /usr/local/cuda), added to the options when it exists.
//
// Handles: a hipsys handle is the driver's own pointer. Live handles are kept in tables
// and checked on the way in, because the driver dereferences what it is given: a stale
// or invented handle is hipErrorInvalidHandle, not a crash. Pinned host allocations are
// tracked the same way, so an async copy outside one is hipErrorInvalidValue. Device
// addresses are checked by the driver itself.
//
// Capture: CUDA ends a capture begun in global or thread-local mode only on the OS thread
// that began it (hipErrorStreamCaptureWrongThread otherwise), so a goroutine capturing in
// those modes locks its OS thread from StreamBeginCapture to StreamEndCapture; relaxed
// mode has no such tie.
//
// Kernel parameters: ModuleGetFunction asks the driver's cuFuncGetParamInfo (CUDA 12.4
// and later) for the function's parameters, which gives each one's offset and size and
// nothing more (Kind ParamUnknown); FuncGetParams returns them, and every launch,
// direct or queued, compares its arguments' number and sizes with them first
// (hipsys.CheckArgs), since cuLaunchKernel reads one argument pointer per parameter and
// a short list crashes the process. With an older driver FuncGetParams is
// hipErrorNotSupported, and launches are compared with the parameter sizes the module's
// image declares (a CUBIN's .nv.info records, a PTX .entry's list: imageparams.go),
// where it can be read.
//
// The launch queue (hipsys.LaunchQueuer): OpenLaunchQueue(device) holds the device's
// ring of 256 launch descriptors (queue.h), which Go fills without a cgo call and a C
// thread of the queue's own empties into cuLaunchKernel. When a launch takes it:
//
//   - directly, on the caller's thread, when the ring is empty, every refusal has been
//     returned and the launch starts a run (the first handoffRun launches after any
//     other call: a launch-then-sync caller never wakes the thread) or the thread is
//     parked; a launch that continues a loop (launches within handoffGap of each other)
//     also kicks the parked thread awake, and goes on directly until it runs;
//   - queued otherwise, the thread then issuing the launches in order while the
//     caller's Go work overlaps the driver's;
//   - directly after the queue is drained, when its arguments do not fit a slot (more
//     than 16 arguments or 176 bytes of them).
//
// Every trampoline settles the queue of the calling thread's current device first
// (cubehip_q_settle, in trampolines.c's ENSURE): a call that follows a queued launch in
// the program follows it in the driver, on any thread. A producer that fills the ring
// sleeps until half of it is free (refillFree); the thread spins 100 µs after its last
// launch, then parks. A queued launch's refusal comes back later, numbered (hipsys's
// queue.go states the contract); each tuned constant's comment gives the measurement or
// the reasoning behind it.
//
// Completion flags (hipsys.FlaggingQueue, hipsys.FlagWaiter; streamflag.go): each stream
// made with StreamCreateWithFlags gets a word of mapped pinned memory. LaunchFlagged
// follows a launch it issues directly with cuStreamWriteValue32 of the word's next value,
// in the same cgo call (not on a capturing stream), and StreamWaitFlag spins on the word
// for up to 100 µs, then waits with cuStreamSynchronize, which also reports a fault (a
// faulted context never writes the word). CUBEHIP_NVIDIA_STREAM_FLAGS=0 turns them off.
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
