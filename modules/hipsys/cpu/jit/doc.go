// Package jit is the cpu platform's hiprtc, module loader and kernel runner: it compiles
// HIP C++ kernel source with the system C++ compiler against a prelude that defines HIP's
// device side, caches the result on disk, loads it and runs kernels over the host's cores.
//
// It owns compiling, loading and running kernels; device memory, streams and events are
// the cpu platform's (the parent package), which calls Compile from hiprtcCompileProgram,
// Load from hipModuleLoadData, Module.Function from hipModuleGetFunction and
// Function.Launch from a stream's worker. It imports only hipsys.
//
// Errors are *hipsys.Error with Platform "cpu" and the HIP call the step stands for:
// hiprtcCompileProgram, hipModuleLoadData, hipModuleGetFunction, hipModuleUnload,
// hipModuleLaunchKernel.
//
// # Where the detail is
//
//   - Compiling (the prelude, the options honoured, what is refused before the compiler
//     runs, how entry bodies are wrapped, the precompiled prelude and the code cache):
//     [Compiler].
//   - Running (one OS thread per block; an entry runs as a loop, as barrier regions
//     rewritten in its source, or as fibers; the worker pool): [Function], with the
//     region rewrite's phases in regions.go and the files beside it.
//   - Cooperative launches: [Function.LaunchCooperative].
//   - Faults (a kernel that faults ends its launch, not the process), the shared-memory
//     arena that keeps a shared overflow off the runtime's state, and the time limit
//     ([SetTimeLimit]): [Function.Launch], fault.go, fault.c, sharedmem.go.
//
// # Concurrency
//
// Compiler, Module and Function are safe for concurrent use. Launch may run on the same
// or different functions from any number of goroutines; Module.Close waits for launches
// in flight.
package jit
