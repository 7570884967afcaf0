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
// Concurrency: the Platform is safe for concurrent use, as the driver is.
package nvidia
