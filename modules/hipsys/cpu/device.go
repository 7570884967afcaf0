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
	cores := runtime.NumCPU()
	if cpuid.CPU.LogicalCores > 0 && cpuid.CPU.LogicalCores < cores {
		// cpuid counts one package; NumCPU is what this process may run on. The smaller
		// is the honest count of cores a launch spreads over.
		cores = cpuid.CPU.LogicalCores
	}
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

// GetDeviceCount is 1: the host.
func (p *Platform) GetDeviceCount() (int, error) { return 1, nil }

// GetDeviceProperties describes device 0; any other is hipErrorInvalidDevice.
func (p *Platform) GetDeviceProperties(device int) (hipsys.DeviceProps, error) {
	if device != 0 {
		return hipsys.DeviceProps{}, errorf("hipGetDeviceProperties", hipsys.ErrorInvalidDevice, "device "+strconv.Itoa(device)+" of 1")
	}
	return p.props, nil
}

// SetDevice accepts device 0, the only one; there is no per-thread state to change.
func (p *Platform) SetDevice(device int) error {
	if device != 0 {
		return errorf("hipSetDevice", hipsys.ErrorInvalidDevice, "device "+strconv.Itoa(device)+" of 1")
	}
	return nil
}

// GetDevice is always 0.
func (p *Platform) GetDevice() (int, error) { return 0, nil }

// MemGetInfo reports the host's RAM as the device's total and what hipMalloc has not
// handed out as free. Free does not subtract what other processes use: the figure is
// the device's budget, as hipMalloc enforces it, not a promise the OS will keep.
func (p *Platform) MemGetInfo() (free, total uint64, err error) {
	used := p.device.usedBytes()
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
	return p.drainAll(call)
}

// drainAll waits for every stream, the null stream included, and collects their
// pending asynchronous errors.
func (p *Platform) drainAll(call string) error {
	var first error
	for _, s := range p.allStreams() {
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
