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
//	(*Compiler).CompileNamed(source, name string, headers []hipsys.Header, options, exprs []string) (image []byte, log string, err error)
//	LoweredNames(image []byte) (map[string]string, error) // name expression -> lowered name
//	Load(image []byte) (*Module, error)
//	(*Module).Function(name string) (*Function, error)
//	(*Module).Close() error
//	(*Function).Launch(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error
//	(*Function).LaunchCooperative(grid, block hipsys.Dim3, sharedMem uint32, params []byte, offsets []uint32) error
//	MaxActiveBlocksPerMultiprocessor(blockThreads int, dynShared uint64) int
//	CooperativeLimit(block hipsys.Dim3, sharedMem uint32) int     // × Multiprocessors()
//	(*Function).Params() []hipsys.KernelParam      // offsets as the C++ ABI lays them out
//
// Errors are *hipsys.Error with Platform "cpu" and the HIP call the step stands for:
// hiprtcCompileProgram, hipModuleLoadData, hipModuleGetFunction, hipModuleUnload,
// hipModuleLaunchKernel.
//
// # Compiling
//
// The source is compiled as C++17 by $CXX (else c++; it may carry arguments, "ccache
// g++") with -O3 -march=native -mprefer-vector-width=512 (full-width vectors where the
// host has AVX-512; compiler.go says why) -fPIC -shared and $CUBEHIP_CPU_CXXFLAGS, with
// prelude/cubehip_prelude.h force-included (<hip/hip_runtime.h> maps to it too, so
// sources compile with or without the include). Options: -D, -U, -I, -O*, -std=c++17 and
// later, -ffast-math are honoured; GPU code-generation options (--offload-arch,
// -fgpu-rdc, --gpu-architecture, ...) are ignored.
//
// A source with #if, #ifdef or #ifndef is first run through the compiler's preprocessor
// (GCC's -fdirectives-only: directives evaluated, macros left alone), so a kernel in a
// disabled block is not an entry. <hip/*.h> names resolve to cubehip's own headers
// (hip_fp16.h, hip_bf16.h, hip_cooperative_groups.h, the rest to the prelude), never to a
// system ROCm installation.
//
// Two constructs are refused before the compiler runs, with RTCErrorCompilation and a
// log that names them and their lines. A kernel launch in device code (`child<<<g, b>>>`,
// CUDA's dynamic parallelism, which HIP does not have) is refused by every platform alike
// (hipsys.DeviceLaunchLog). Implicit warp-synchronous code (warpsync.go) is refused here
// only: a shared array or volatile pointer that one statement writes at a thread's index
// and another reads at a different thread-dependent index with no barrier, __syncwarp,
// warp function or group sync between them, as in the unrolled last warp of a
// shared-memory reduction. It relies on a warp's lanes running in lockstep, as AMD's
// wavefronts do; here they run one after another between barriers, which would give
// wrong answers. Code whose threads share through shared memory only across barriers is
// never refused; sharing the scan cannot see (a plain pointer parameter of a helper, an
// alias under another name) is not caught.
//
// Before compiling, the source is scanned (entries.go) for its extern "C" __global__
// definitions (also inside extern "C" { } blocks and namespaces, with __launch_bounds__
// before or after __global__); templates and C++-linkage kernels are not entries by their
// own names, as on the GPU platforms. With name expressions (CompileNamed; hiprtc's
// hiprtcAddNameExpression), their bodies are wrapped as the entries' are, and each
// expression naming a kernel gets a launcher that Module.Function finds by the symbol the
// C++ compiler gave it, its lowered name (names.go). Each entry body is wrapped in CUBEHIP_THREADS_BEGIN/END: the
// original body becomes a lambda taking blockIdx and threadIdx (blockDim and gridDim are
// locals it captures), called once per thread by loops over the blocks of the call's
// range and their threads (so `return` ends a thread and each thread has its own copy of
// the parameters). The x loop runs over the int index blockIdx.x*blockDim.x+threadIdx.x
// when that cannot wrap, so GCC splits `if (i < n)` out of it and vectorizes the rest
// without masks (cubehip_entry.h says why); over that index plus C when the body declares
// `int x = blockIdx.x * blockDim.x + threadIdx.x + C` (a stencil's interior point,
// indexoffset.go), so that a guard on x is one on the loop's counter too. `extern __shared__ T a[];` becomes a
// pointer to the running block's dynamic shared buffer (64 KiB of thread-local storage:
// one OS thread runs one block at a time). A launcher per entry is appended to the
// translation unit. Line numbers are kept, so the compile log points at the user's lines.
//
// The prelude is precompiled (GCC's precompiled headers) once per set of code-generation
// flags and modes, in the background after the first compile that needs it, under
// DefaultCacheDir/cpu-v1/pch; later compiles load it instead of parsing the prelude
// (pch.go; CUBEHIP_CPU_PCH=0 turns it off).
//
// Code objects are cached by a hash of the source, headers, options, the compiler's
// identity, $CUBEHIP_CPU_CXXFLAGS, the warp width, the CPU's features and the prelude:
// in memory per Compiler and on disk under <cacheDir>/cpu-v1 (files written atomically,
// so processes may share the directory). CodeIdentity is that hash without the program,
// for a cache kept above this one. A cache hit runs no compiler at all: the compiler's
// --version output is itself cached, keyed by the binary's path, size and modification
// time. What is cached is loaded into the process, so nothing is taken from the cache
// unchecked: each object is stored with a SHA-256 of its key and bytes, verified before
// use (a damaged one is compiled again), directories are created 0700 and files 0600,
// and a cache directory another user owns or others can write to is not used (one
// warning, then a private temporary directory for the process).
//
// # Running
//
// One OS thread runs one block at a time, and each entry runs one of three ways, chosen
// per entry when it is compiled:
//
//   - Loop: an entry that names no barrier and no warp function runs each range of blocks
//     as one call, which loops over the blocks and their threads.
//   - Regions: an entry with __syncthreads (and warp shuffles) is rewritten in its source
//     (regions.go, prelude/cubehip_regions.h) into code that runs once per block, in
//     which the statements between two barriers are one loop over the block's threads (a
//     region), so a barrier is where one loop ends and the next begins and costs no
//     switch. Loops, ifs and blocks that hold barriers stay as they were, run once per
//     block: their conditions, a for's init and step must be block-uniform by
//     construction (the block's indices and sizes, parameters the body never assigns,
//     their loop variables, uniform locals, constants and macros; HIP requires a barrier's
//     conditions to be uniform anyway). A local that one region sets and a later one
//     reads is recomputed in each region when it only depends on the thread's and block's
//     indices, parameters and constants (tid, row, col), else kept in a per-thread slot,
//     an array indexed by the thread's linear index; `return` marks the thread done for
//     the regions after. A shuffle (__shfl, _up, _down, _xor and their _sync forms)
//     splits its statement's region: every lane posts its value at the end of one, and
//     reads its source lane's in the next, with the fibers' answers at 32 and 64 lanes.
//     Atomics on __shared__ arrays become plain updates there: the block's threads run
//     one after another on one OS thread, so nothing races with them.
//   - Fibers: every other entry with barriers or warp functions, and every entry of a
//     module whose barriers or warp functions are out of the rewrite's sight (in a
//     __device__ function, a macro or a header), runs each thread as a fiber with a
//     64 KiB stack (guard page below), switched by a register-only context switch
//     (prelude/cubehip_fiber.h) at each barrier; fibers of a module that calls warp
//     functions also wait, lane by lane, at each warp collective until every running
//     lane of the warp reaches one (prelude/cubehip_warp.h). An if whose condition is
//     the thread's and whose body holds shuffles but no barrier (`if (warp == 0)`, a
//     second level of a block reduction) runs as regions too: a region stores each
//     thread's condition, the body's regions skip the threads without it, and its
//     shuffles read only lanes with it (the others leave the caller's value, as the
//     fibers' collectives do); so do such ifs inside one another, each thread's flag the
//     outer one's and its own condition. What falls back: a barrier behind a condition
//     that names the thread's index or a per-thread local, or a shuffle in such an if
//     with an else (the fibers group lanes that diverge to different shuffles into one
//     collective); a barrier or shuffle in a switch or an expression;
//     a shuffle in a __device__ function; votes, __syncwarp, matches, reductions and cooperative
//     groups; __syncthreads_count/and/or (the fibers count the block's votes at the
//     barrier); break or continue out of a region; goto;
//     lambdas; a parameter the body assigns; a local live across a barrier declared auto,
//     with others, as a reference or initialized in place; a shuffle in a kernel that
//     returns early. With $CUBEHIP_LOG=debug each entry that runs as fibers is logged
//     with the reason when it is compiled; $CUBEHIP_CPU_REGIONS=0 runs every barrier
//     entry as fibers (part of the code key). Should the rewritten source not compile,
//     the module is compiled again as fibers, so the rewrite never turns a kernel that
//     compiles into one that does not, and a compile error is always the user's own.
//
// Source to source rather than on LLVM IR: the jit already scans and rewrites entry
// bodies, g++ is the one compiler it can count on (clang is not installed by default),
// and what the rewrite leaves is ordinary C++ that GCC vectorizes across threads: each
// region is a loop over an int thread counter, which GCC splits at `if (t < k)` and
// vectorizes, as it does cubehip_entry.h's thread loop. The structured subset covers the
// barrier kernels HIP code is made of (reductions, scans, tiled matrix products,
// histograms, stencils with halos, warp-shuffle reductions); the fibers remain for the
// rest, with every construct's answers checked against them (regions_test.go).
//
// A block's threads form warps of WarpSize lanes (32; 64 with $CUBEHIP_CPU_WARP_SIZE=64).
// __device__ functions that read threadIdx & co. see thread-local copies the runner
// keeps current, which costs a store per thread, so only modules that need it pay it.
//
// Blocks are spread over a persistent pool of pthreads, one pinned to each CPU the first
// launching thread may use, in chunks of whole blocks: one cgo call per launch, at most
// one wake-up per worker. The launching thread works too, and a launch wakes only the
// workers of the other CPUs, so its CPU stays its own: a woken worker left free to run
// anywhere was queued on the launching thread's CPU, taking turns with it while another
// CPU idled, where the CPUs report no shared cache (the 2-core dev VM; runner.c says
// why). A worker whose pinning is refused runs unpinned. A launch of one block runs
// inline on the caller without waking the pool; so does one of at most 4096 threads,
// unless its first block, run and timed on the caller, shows that the rest would take
// over 20 µs there (a few long blocks: a histogram's per-thread runs), when the rest goes
// to the pool.
//
// # Cooperative launches
//
// LaunchCooperative (hipModuleLaunchCooperativeKernel) runs every block of the grid at
// once, so that cooperative groups' this_grid().sync() is a barrier every block reaches:
// the launching thread runs block 0 and each other block runs on a thread of a second
// pool (runner.c), grown on demand and kept, unpinned, since a cooperative grid may have
// more blocks than the host has CPUs. A kernel naming cooperative groups runs its threads
// as fibers, so grid_group::sync() is a block barrier, a wait of the block's OS thread at
// the grid's barrier (a mutex and a condition variable: its waiters may outnumber the
// CPUs), and a second block barrier. A block that returns no longer counts at the grid's
// barrier; a block that faults ends it for all, and the launch reports the first fault.
// The device holds at once MaxActiveBlocksPerMultiprocessor blocks per multiprocessor (a
// CPU): as many threads as one largest block, in whole warps, within the shared memory
// a multiprocessor has, as a GPU reckons its occupancy; a grid over that times
// Multiprocessors() is hipErrorCooperativeLaunchTooLarge naming the limit, and nothing
// runs. grid_group::is_valid() is true only in such a launch. this_grid().sync() in a
// launch that is not cooperative cannot be honoured (its blocks do not all run at once,
// so the barrier would never complete): the kernel traps there and the launch ends with
// hipErrorLaunchFailure naming the construct, rather than hang or skip the barrier; with
// $CUBEHIP_CPU_CATCH_FAULTS=0 the trap ends the process, as any fault does.
//
// # Faults
//
// A kernel that faults ends its launch, not the process (fault.c, fault.go): an access
// to an unmapped address (SIGSEGV, SIGBUS; a fiber that overflows its 64 KiB stack into
// the guard page too) is hipErrorIllegalAddress, an integer division by zero (SIGFPE),
// __trap() (SIGILL), abort() and a failed assert (SIGABRT) are hipErrorLaunchFailure,
// each with a message naming the kernel, the fault and the blocks that thread ran. As on
// a GPU the launch ends there: blocks not yet started never run. Go's runtime owns those
// signals' handlers, so at the first launch handlers are put in front of Go's (with
// SA_ONSTACK, as Go requires): the runner sets a thread-local guard around each range of
// blocks it runs, on the pool's workers and on the launching thread alike, and a signal
// the CPU raised while the guard is set jumps back to it (sigsetjmp/siglongjmp; from a
// fiber's stack too, the handler running on the thread's alternate signal stack). Every
// other signal goes on to the handler that was there before, Go's, so Go's nil-pointer
// panics and os/signal behave as before. A kernel's C++ destructors do not run, and a
// libc lock it held stays held. $CUBEHIP_CPU_CATCH_FAULTS=0 (read when the process
// starts) installs nothing: a fault then ends the process, for a core dump with the
// kernel's frames. Kernels share the process's memory: a stray write that lands in
// mapped memory corrupts the host process silently.
//
// # Concurrency
//
// Compiler, Module and Function are safe for concurrent use. Launch may run on the same
// or different functions from any number of goroutines; Module.Close waits for launches
// in flight.
package jit
