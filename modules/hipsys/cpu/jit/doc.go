// Package jit is the cpu platform's hiprtc, module loader and kernel runner: it compiles
// HIP C++ kernel source with the system C++ compiler against a prelude that defines HIP's
// device side, caches the result on disk, loads it and runs kernels over the host's cores.
//
// It owns compiling, loading and running kernels; device memory, streams and events are
// the cpu platform's (the parent package), which calls Compile from hiprtcCompileProgram,
// Load from hipModuleLoadData, Module.Function from hipModuleGetFunction and
// Function.Launch from a stream's worker. It imports only hipsys.
//
// # API
//
//	NewCompiler(cacheDir string) *Compiler          // "" = DefaultCacheDir()
//	(*Compiler).Compile(source, name string, headers []hipsys.Header, options []string) (image []byte, log string, err error)
//	Load(image []byte) (*Module, error)
//	(*Module).Function(name string) (*Function, error)
//	(*Module).Close() error
//	(*Function).Launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error
//
// Errors are *hipsys.Error with Platform "cpu" and the HIP call the step stands for:
// hiprtcCompileProgram, hipModuleLoadData, hipModuleGetFunction, hipModuleUnload,
// hipModuleLaunchKernel.
//
// # Compiling
//
// The source is compiled as C++17 by $CXX (else c++) with -O3 -march=native -fPIC
// -shared, with prelude/cubehip_prelude.h force-included (<hip/hip_runtime.h> maps to
// it too). Before compiling, the source is scanned for its extern "C" __global__ entry
// points (also inside extern "C" { } blocks and namespaces; with __launch_bounds__ on
// either side of __global__) and a launcher per entry is appended to the translation
// unit; `extern __shared__ T a[];` is rewritten into a pointer to the running block's
// dynamic shared buffer (see entries.go). Options: -D, -U, -I, -O*, -std=c++17 and later,
// -ffast-math are honoured; GPU code-generation options are ignored.
//
// Code objects are cached by a hash of the source, headers, options, the compiler's
// identity, the CPU's features and the prelude: in memory per Compiler and on disk under
// <cacheDir>/cpu-v1 (files written atomically, so processes may share the directory). A
// cache hit runs no compiler at all: the compiler's --version output is itself cached,
// keyed by the binary's path, size and modification time.
//
// # Running
//
// One OS thread runs one block at a time. A module whose source never names
// __syncthreads runs each block's threads as a plain loop; otherwise each thread is a
// fiber with a 64 KiB stack, switched by a register-only context switch (prelude/
// cubehip_fiber.h) at each barrier. warpSize is 1. Blocks are spread over a persistent
// pool of pthreads, one per CPU this process may use minus one (the launching thread works
// too), in chunks of whole blocks; a launch of one block, or of few threads, runs inline on
// the caller without waking the pool.
//
// Kernels share the process's memory: a kernel that writes out of bounds can crash the
// host process.
//
// # Concurrency
//
// Compiler, Module and Function are safe for concurrent use. Launch may run on the same
// or different functions from any number of goroutines; Module.Close waits for launches
// in flight.
package jit
