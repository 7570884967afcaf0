package cpu

import (
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// name is the platform's name in the registry and in every *hipsys.Error it returns.
const name = "cpu"

func init() { hipsys.Register(name, Open) }

// Platform is the host CPU as a HIP device. Its methods are safe for concurrent use.
//
// What it owns:
//
//   - Memory. Device memory is host memory outside the Go heap (C aligned_alloc for
//     small blocks, mmap from 1 MiB), 256-byte aligned. Every pointer a call receives is
//     checked against a sorted table of live allocations: an unknown, freed or
//     wrong-kind pointer, or a range that runs past its allocation, is
//     hipErrorInvalidValue naming the side (dst, src) that is wrong; interior pointers
//     are valid, and every size, pitch and span is checked with arithmetic that cannot
//     wrap around 64 bits (hipsys.Copy2D.Check). The device's memory is the
//     host's RAM (MemGetInfo), and Malloc beyond what is free is hipErrorOutOfMemory.
//     Async copies and the host side of 2D copies must use pinned memory from
//     HostMalloc. Free and HostFree first wait for all queued work, as hipFree does.
//   - Streams. Each stream is an in-order queue with one worker goroutine; copies,
//     memsets, launches, event records and waits are queued and return at once. The
//     null stream is a real stream, created on first use, and follows HIP's legacy
//     rules: its work runs after work already queued on blocking streams (those
//     created without StreamNonBlocking) and theirs after its. Blocking copies and
//     memsets (Memset, MemcpyHtoD, ...) run on the calling goroutine after that work.
//   - Asynchronous failures, delivered as a GPU delivers a failed kernel: at the
//     next synchronization of any kind that waits for it. A command that fails on
//     the worker (a kernel that faults, a graph's kernel whose module was unloaded, a
//     kernel run as fibers whose stacks cannot be mapped) becomes its stream's failure, and every
//     synchronization that waits past it returns it: EventSynchronize, and EventQuery
//     once complete, of an event recorded after it on that stream; StreamQuery once
//     the stream is idle; StreamSynchronize; DeviceSynchronize. A synchronization that
//     waits only for work queued before the failed command (an event recorded before
//     it) does not see it. A stream made to wait (StreamWaitEvent) for an event
//     recorded after it takes the failure as its own, as on a GPU, whether or not the
//     record has run when the wait is issued. StreamSynchronize and DeviceSynchronize
//     acknowledge the failure, and from then on the stream reports nothing (nor passes
//     it on) until another command fails. This is where the cpu device parts from a
//     GPU: a GPU's kernel fault is sticky (every later call fails, for good) and the
//     work queued after it never runs, while the cpu device is not damaged by a failed
//     command, so later work on the stream still runs and the stream recovers. Everything a launch can be
//     checked for before it runs (its shape, its shared memory, the number and sizes
//     of its arguments against the kernel's parameters) fails ModuleLaunchKernel
//     itself instead.
//   - Events, stamped with Go's monotonic clock when the worker reaches the record.
//   - Capture and graphs: a capturing stream records its commands as graph nodes
//     (Kernel, Memcpy, Memset, EventRecord, WaitEvent) in one chain; instantiate copies
//     them and GraphLaunch queues them all as one unit. The calls HIP forbids during a
//     capture (StreamSynchronize or StreamQuery on the capturing stream; Malloc, Free,
//     HostFree, blocking copies and memsets, DeviceSynchronize during a global-mode
//     capture, or a thread-local one begun on the calling OS thread) fail with
//     hipErrorStreamCaptureUnsupported and invalidate the capture.
//   - Devices. One by default; CUBEHIP_CPU_DEVICES=N (1 to 64) offers N, all the same
//     host, so that code driving several GPUs runs on a machine with none. The current
//     device belongs to the OS thread (SetDevice), as in HIP. Each device has its own
//     allocations and memory budget (MemGetInfo, Malloc's hipErrorOutOfMemory), its
//     own streams (a stream belongs to the device current when it was made), and
//     DeviceSynchronize waits for and reports the current device's streams only. The
//     null stream is one for all devices: its legacy ordering then spans them, which
//     orders more than HIP would, never less. Every pair of devices reaches each other
//     (DeviceCanAccessPeer); MemcpyPeerAsync checks that each pointer belongs to the
//     device it is said to, hipErrorInvalidValue otherwise.
//   - Live counts: Live reports how many streams, events, allocations (and their
//     bytes), modules, graphs, executable graphs and programs are alive, for leak
//     tests (hipsys.LiveCounter).
//   - Device properties from cpuid: the CPU's brand string, "x86-64-vN", logical cores
//     as multiprocessors, and the warp size the jit compiles for (jit.WarpSize): 32, or
//     64 with CUBEHIP_CPU_WARP_SIZE=64.
//
// A kernel runs in this process. One that faults (a load or store at an unmapped
// address, an integer division by zero, __trap(), abort() or a failed assert) ends its
// launch, not the process: the launch fails on the worker with the status a GPU gives
// (hipErrorIllegalAddress for a bad memory access, hipErrorLaunchFailure for the rest)
// and a message naming the kernel and the fault, delivered as every asynchronous failure
// is (above). The fault is not sticky, where a GPU's is: the kernel stopped at its bad
// access, so the device is no more damaged than by any failed command, and a process
// that opens the device again, or a layer above that tracks which buffers a failed launch
// left unwritten, finds it working. What no status can report is a write out of bounds
// that lands in memory the process owns: it corrupts the host process silently. Kernel
// pointer arguments are not checked. CUBEHIP_CPU_CATCH_FAULTS=0 leaves faults to Go's
// runtime, which ends the process (a core dump under GOTRACEBACK=crash), for debugging
// the kernel; package jit says how faults are caught. A launch that runs past the time
// limit (CUBEHIP_CPU_TIME_LIMIT, a Go duration read when the platform opens, or
// SetTimeLimit; none by default) fails the same way, with hipErrorLaunchTimeOut.
type Platform struct {
	props    hipsys.DeviceProps // every device's: each is the same host
	totalMem uint64             // advertised device memory: the host's RAM

	device allocTable // hipMalloc'ed blocks of every device, each tagged with its own

	devices devices    // how many, which is current on each thread, what each has charged
	host    allocTable // hipHostMalloc'ed blocks
	// module variables handed out by ModuleGetGlobal, which copies take as device memory
	globals globalTable
	// host ranges ImportMemory made device memory
	imports importTable

	compiler *jit.Compiler
	check    checkState // the kernel checker's settings and quarantine (check.go)

	nullOnce sync.Once
	null     atomic.Pointer[stream]
	blocking atomic.Int32 // live streams created without StreamNonBlocking

	// Destroyed streams whose workers are still finishing queued work: hipFree and
	// hipDeviceSynchronize must wait for them too, or a destroyed stream's pending
	// memset could write memory Free has already returned to the system.
	retiredMu sync.Mutex
	retired   map[*stream]struct{}

	streams   handles[stream]
	events    handles[event]
	modules   handles[module]
	functions handles[function]
	graphs    handles[graph]
	execs     handles[graphExec]
	nodes     handles[graphNode]
	programs  handles[program]

	// Live captures, for the calls HIP forbids while one runs (hipMalloc, a blocking
	// copy, hipDeviceSynchronize). capturing is their count, read without the lock so
	// that those calls cost one atomic load when nothing captures.
	capMu     sync.Mutex
	captures  map[*capture]struct{}
	capturing atomic.Int32
}

var _ hipsys.Platform = (*Platform)(nil)

// Open opens the cpu platform. It always succeeds on a supported host: the device is
// the machine itself. Each call returns a new, independent device; hipsys.Open calls it
// once per process and shares the result.
func Open() (hipsys.Platform, error) { return newPlatform() }

func newPlatform() (*Platform, error) {
	total, err := hostMemory()
	if err != nil {
		return nil, hipsys.NewError(name, "hipInit", hipsys.ErrorNotInitialized, err.Error())
	}
	n, err := deviceCount()
	if err != nil {
		return nil, hipsys.NewError(name, "hipInit", hipsys.ErrorInvalidValue, err.Error())
	}
	p := &Platform{
		totalMem: total,
		compiler: jit.NewCompiler(""),
		captures: map[*capture]struct{}{},
		retired:  map[*stream]struct{}{},
		devices:  newDevices(n),
	}
	p.props = deviceProps(total)
	openTimeLimit()
	checks, err := checksFromEnv()
	if err != nil {
		return nil, hipsys.NewError(name, "hipInit", hipsys.ErrorInvalidValue, envChecks+": "+err.Error())
	}
	p.check.env = checks
	p.check.now.Store(uint32(checks))
	return p, nil
}

// Name is "cpu".
func (p *Platform) Name() string { return name }

// errorf builds the *hipsys.Error of a failed call on this platform.
func errorf(call string, status hipsys.Status, detail string) error {
	return hipsys.NewError(name, call, status, detail)
}

// nullStream is HIP's default stream: a real in-order worker like any other, created on
// first use so that a program that never touches it runs no goroutine for it.
func (p *Platform) nullStream() *stream {
	p.nullOnce.Do(func() { p.null.Store(newStream(p, streamNull)) })
	return p.null.Load()
}

// stream resolves a stream handle for call: 0 is the null stream, anything else must be
// a live handle from StreamCreateWithFlags.
func (p *Platform) stream(call string, h hipsys.Stream) (*stream, error) {
	if h == hipsys.NullStream {
		return p.nullStream(), nil
	}
	if s := p.streams.get(uintptr(h)); s != nil {
		return s, nil
	}
	return nil, errorf(call, hipsys.ErrorInvalidHandle, "unknown or destroyed stream")
}
