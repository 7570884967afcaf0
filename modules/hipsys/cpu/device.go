package cpu

import (
	"runtime"
	"strconv"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// Launch limits are package jit's: the properties report what its runner accepts, and
// ModuleLaunchKernel enforces the same numbers before queueing, so a bad shape fails
// at the call rather than at the next synchronization.
const (
	maxThreadsPerBlock = jit.MaxThreadsPerBlock
	sharedMemPerBlock  = jit.MaxSharedMemPerBlock
)

// hostMemory is the host's RAM, which is the device's memory.
func hostMemory() (uint64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, err
	}
	return uint64(si.Totalram) * uint64(si.Unit), nil
}

// deviceProps describes the host CPU in hipDeviceProp_t's terms.
func deviceProps(total uint64) hipsys.DeviceProps {
	// The cores a launch spreads over; a cooperative grid's limit is counted in them too.
	cores := jit.Multiprocessors()
	l2 := cpuid.CPU.Cache.L2
	if l2 < 0 {
		l2 = 0
	}
	name := cpuid.CPU.BrandName
	if name == "" {
		name = "cpu (" + runtime.GOARCH + ")"
	}
	return hipsys.DeviceProps{
		Name:     name,
		ArchName: archName(),
		TotalMem: total,
		// The jit runs a block's threads as warps of this many lanes (shuffles and votes
		// see them); 32 unless $CUBEHIP_CPU_WARP_SIZE asks for 64.
		WarpSize:                      jit.WarpSize,
		MultiProcessorCount:           cores,
		ClockRateKHz:                  int(cpuid.CPU.Hz / 1000),
		SharedMemPerBlock:             sharedMemPerBlock,
		SharedMemPerBlockOptin:        sharedMemPerBlock, // no opt-in: every kernel may use it all
		MaxSharedMemPerMultiProcessor: sharedMemPerBlock,
		RegsPerBlock:                  65536,
		MaxThreadsPerBlock:            maxThreadsPerBlock,
		MaxThreadsDim:                 [3]int{int(jit.MaxBlockDim[0]), int(jit.MaxBlockDim[1]), int(jit.MaxBlockDim[2])},
		MaxGridSize:                   [3]int{int(jit.MaxGridDim[0]), int(jit.MaxGridDim[1]), int(jit.MaxGridDim[2])},
		L2CacheSize:                   l2,
		TextureAlignment:              alignment,
		SurfaceAlignment:              alignment,
		Integrated:                    true,
		ConcurrentKernels:             true,
	}
}

// archName is the gcnArchName of the host: the x86-64 micro-architecture level, which is
// what decides the instructions compiled kernels may use, or the GOARCH elsewhere.
func archName() string {
	switch runtime.GOARCH {
	case "amd64":
		if lvl := cpuid.CPU.X64Level(); lvl > 1 {
			return "x86-64-v" + strconv.Itoa(lvl)
		}
		return "x86-64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// GetDeviceCount is the number of devices CUBEHIP_CPU_DEVICES asked for (1 by default).
func (p *Platform) GetDeviceCount() (int, error) { return p.devices.n, nil }

// GetDeviceProperties describes a device; every one is the host, so they are alike. A
// device past the count is hipErrorInvalidDevice.
func (p *Platform) GetDeviceProperties(device int) (hipsys.DeviceProps, error) {
	if !p.devices.valid(device) {
		return hipsys.DeviceProps{}, p.invalidDevice("hipGetDeviceProperties", device)
	}
	props := p.props
	// Tools tell devices apart by their PCI location, as they do GPUs.
	props.PCIDeviceID = device
	return props, nil
}

// SetDevice makes device current on the calling OS thread: the device whose memory
// hipMalloc takes, whose streams StreamCreate makes, and which DeviceSynchronize waits
// for. Callers lock their goroutine to its thread first (runtime.LockOSThread).
func (p *Platform) SetDevice(device int) error {
	if !p.devices.valid(device) {
		return p.invalidDevice("hipSetDevice", device)
	}
	if p.devices.n > 1 {
		p.devices.current.Store(unix.Gettid(), device)
	}
	return nil
}

// GetDevice is the calling OS thread's current device (0 until SetDevice).
func (p *Platform) GetDevice() (int, error) { return p.devices.currentDevice(), nil }

func (p *Platform) invalidDevice(call string, device int) error {
	return errorf(call, hipsys.ErrorInvalidDevice, "device "+strconv.Itoa(device)+" of "+strconv.Itoa(p.devices.n))
}

// MemGetInfo reports, for the current device, the host's RAM as the total and what its
// hipMalloc has not handed out as free. Free does not subtract what other processes (or
// the other devices, which share the RAM) use: the figure is the device's budget, as
// hipMalloc enforces it, not a promise the OS will keep.
func (p *Platform) MemGetInfo() (free, total uint64, err error) {
	used := p.devices.usedBytes(p.devices.currentDevice())
	if used > p.totalMem {
		used = p.totalMem
	}
	return p.totalMem - used, p.totalMem, nil
}

// DeviceSynchronize blocks until every stream has finished the work queued on it before
// the call, and returns the first asynchronous failure any of them recorded, which it
// acknowledges on every stream (see StreamSynchronize).
// It is illegal during a capture in global mode, as in HIP.
func (p *Platform) DeviceSynchronize() error {
	const call = "hipDeviceSynchronize"
	if err := p.checkUnsafe(call); err != nil {
		return err
	}
	return p.drainDevice(call, p.devices.currentDevice())
}

// drainDevice waits for every stream of dev, the null stream (which all devices
// share) included, and collects their pending asynchronous errors. Another device's
// streams are left alone: a failure there is that device's to report.
func (p *Platform) drainDevice(call string, dev int) error {
	var first error
	for _, s := range p.allStreams() {
		if s.kind != streamNull && s.dev != dev {
			continue
		}
		if err := s.synchronize(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return asyncError(call, first)
	}
	return nil
}

// allStreams is every stream that may still run work: the live ones, the destroyed
// ones still draining, and the null stream.
func (p *Platform) allStreams() []*stream {
	all := p.streams.all()
	p.retiredMu.Lock()
	for s := range p.retired {
		all = append(all, s)
	}
	p.retiredMu.Unlock()
	return append(all, p.nullStream())
}
