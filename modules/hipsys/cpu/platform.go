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
