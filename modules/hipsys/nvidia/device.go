package nvidia

// #include "trampolines.h"
import "C"

import (
	"bytes"
	"fmt"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// CUdevice_attribute numbers (cuda.h; stable since they were introduced).
const (
	attrMaxThreadsPerBlock       = 1
	attrMaxBlockDimX             = 2
	attrMaxGridDimX              = 5
	attrMaxSharedMemoryPerBlock  = 8
	attrWarpSize                 = 10
	attrMaxRegistersPerBlock     = 12
	attrClockRate                = 13
	attrTextureAlignment         = 14
	attrMultiprocessorCount      = 16
	attrIntegrated               = 18
	attrSurfaceAlignment         = 30
	attrConcurrentKernels        = 31
	attrPCIBusID                 = 33
	attrPCIDeviceID              = 34
	attrL2CacheSize              = 38
	attrPCIDomainID              = 50
	attrComputeCapabilityMajor   = 75
	attrComputeCapabilityMinor   = 76
	attrMaxSharedMemoryPerSMCopy = 81
	attrMaxSharedMemoryOptin     = 97 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
)

// GetDeviceCount is the number of CUDA devices (at most 64, the size of the context
// table).
func (p *Platform) GetDeviceCount() (int, error) { return p.ndev, nil }

func (p *Platform) checkDevice(call string, d int) error {
	if d < 0 || d >= p.ndev {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidDevice,
			fmt.Sprintf("device %d of %d", d, p.ndev))
	}
	return nil
}

// SetDevice makes device d current on the calling OS thread: its primary context is
// made current now, and again by any later call that finds the thread's context changed.
func (p *Platform) SetDevice(d int) error {
	if err := p.checkDevice("hipSetDevice", d); err != nil {
		return err
	}
	if p.ndev == 1 {
		// The thread's device can be no other, and every call makes the context current
		// before it reaches the driver: the cgo call is skipped, since the server calls
		// SetDevice before each operation. (A failure to make the context current shows
		// at the next call, not here.)
		return nil
	}
	return cuError("hipSetDevice", int32(C.cu_set_dev(C.int(d))))
}

// GetDevice is the calling OS thread's current device (0 until SetDevice).
func (p *Platform) GetDevice() (int, error) { return int(C.cu_get_dev()), nil }

// DeviceSynchronize blocks until the current device has finished all work.
func (p *Platform) DeviceSynchronize() error {
	return cuError("hipDeviceSynchronize", int32(C.cu_ctx_sync()))
}

// MemGetInfo is the current device's free and total memory in bytes.
func (p *Platform) MemGetInfo() (free, total uint64, err error) {
	var f, t C.size_t
	if err := cuError("hipMemGetInfo", int32(C.cu_mem_info(&f, &t))); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// GetDeviceProperties reads the device's attributes once and caches them: they cannot
// change while the process runs.
func (p *Platform) GetDeviceProperties(d int) (hipsys.DeviceProps, error) {
	const call = "hipGetDeviceProperties"
	if err := p.checkDevice(call, d); err != nil {
		return hipsys.DeviceProps{}, err
	}
	p.propsMu.Lock()
	defer p.propsMu.Unlock()
	if pr, ok := p.props[d]; ok {
		return pr, nil
	}
	var err error
	attr := func(a int) int {
		var v C.int
		if e := cuError(call, int32(C.cu_device_attr(&v, C.int(a), C.int(d)))); e != nil && err == nil {
			err = e
		}
		return int(v)
	}
	var name [256]byte
	// SAFETY: name is a Go array without pointers, written only during the call.
	if e := cuError(call, int32(C.cu_device_name((*C.char)(unsafe.Pointer(&name[0])), C.int(len(name)), C.int(d)))); e != nil {
		return hipsys.DeviceProps{}, e
	}
	var total C.size_t
	if e := cuError(call, int32(C.cu_device_total_mem(&total, C.int(d)))); e != nil {
		return hipsys.DeviceProps{}, e
	}
	pr := hipsys.DeviceProps{
		Name:                          string(name[:max(0, bytes.IndexByte(name[:], 0))]),
		TotalMem:                      uint64(total),
		WarpSize:                      attr(attrWarpSize),
		MultiProcessorCount:           attr(attrMultiprocessorCount),
		SharedMemPerBlock:             uint64(attr(attrMaxSharedMemoryPerBlock)),
		SharedMemPerBlockOptin:        uint64(attr(attrMaxSharedMemoryOptin)),
		MaxSharedMemPerMultiProcessor: uint64(attr(attrMaxSharedMemoryPerSMCopy)),
		RegsPerBlock:                  attr(attrMaxRegistersPerBlock),
		MaxThreadsPerBlock:            attr(attrMaxThreadsPerBlock),
		L2CacheSize:                   attr(attrL2CacheSize),
		Major:                         attr(attrComputeCapabilityMajor),
		Minor:                         attr(attrComputeCapabilityMinor),
		TextureAlignment:              uint64(attr(attrTextureAlignment)),
		SurfaceAlignment:              uint64(attr(attrSurfaceAlignment)),
		Integrated:                    attr(attrIntegrated) != 0,
		ConcurrentKernels:             attr(attrConcurrentKernels) != 0,
		PCIBusID:                      attr(attrPCIBusID),
		PCIDeviceID:                   attr(attrPCIDeviceID),
		PCIDomainID:                   attr(attrPCIDomainID),
	}
	for i := range 3 {
		pr.MaxThreadsDim[i] = attr(attrMaxBlockDimX + i)
		pr.MaxGridSize[i] = attr(attrMaxGridDimX + i)
	}
	if err != nil {
		return hipsys.DeviceProps{}, err
	}
	// The clock rate is deprecated in CUDA 13 and may be refused; it is informational,
	// so its failure does not fail the whole query.
	var clk C.int
	if C.cu_device_attr(&clk, attrClockRate, C.int(d)) == 0 {
		pr.ClockRateKHz = int(clk)
	}
	pr.ArchName = archName(pr.Major, pr.Minor)
	p.props[d] = pr
	return pr, nil
}

// archName is HIP's gcnArchName on NVIDIA: the SM name NVRTC and the driver use.
func archName(major, minor int) string { return fmt.Sprintf("sm_%d%d", major, minor) }

// currentDevice is the calling OS thread's current device.
func currentDevice() int { return int(C.cu_get_dev()) }
