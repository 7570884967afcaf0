package amd

// #include "trampolines.h"
import "C"

import (
	"log/slog"
	"os"
	"strings"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// hipDeviceAttribute_t values. ROCm 6.0 retired some attributes but kept their numbers
// (hipDeviceAttributeUnused1..5), so these are the same from ROCm 5.2 to 7.x.
const (
	attrClockRate          = 5
	attrConcurrentKernels  = 8
	attrIntegrated         = 16
	attrL2CacheSize        = 19
	attrMajor              = 23
	attrMaxBlockDimX       = 26 // Y and Z follow
	attrMaxGridDimX        = 29 // Y and Z follow
	attrMaxThreadsPerBlock = 56
	attrMinor              = 61
	attrMultiprocessors    = 63
	attrPCIBusID           = 67
	attrPCIDeviceID        = 68
	attrPCIDomainID        = 69
	attrRegsPerBlock       = 71
	attrSharedPerBlock     = 74
	attrSurfaceAlignment   = 79
	attrTextureAlignment   = 81
	attrWarpSize           = 87
	attrSharedPerCU        = 10002
)

// GetDeviceCount is hipGetDeviceCount. Without a visible AMD GPU it is HIP's own
// hipErrorNoDevice, with the likely reason in the error's Detail.
func (p *Platform) GetDeviceCount() (int, error) {
	var n C.int
	r := C.amdt_int_p(p.lib.s.getDeviceCount, &n)
	if hipStatus(r) == hipsys.ErrorNoDevice || (r == 0 && n == 0) {
		return 0, invalid("hipGetDeviceCount", hipsys.ErrorNoDevice, noDeviceReason())
	}
	if err := check("hipGetDeviceCount", r); err != nil {
		return 0, err
	}
	return int(n), nil
}

// noDeviceReason says why ROCm sees no GPU, in the terms a user can act on.
func noDeviceReason() string {
	const why = "no AMD GPU visible"
	for _, env := range []string{"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"} {
		if v, ok := os.LookupEnv(env); ok {
			return why + " (" + env + "=" + v + " may hide every GPU)"
		}
	}
	f, err := os.OpenFile("/dev/kfd", os.O_RDWR, 0)
	switch {
	case os.IsNotExist(err):
		return why + " (/dev/kfd does not exist: the amdgpu driver is not loaded, " +
			"or the container was started without --device=/dev/kfd --device=/dev/dri)"
	case err != nil:
		return why + " (/dev/kfd: " + err.Error() + "; the user needs the render and video groups)"
	}
	f.Close()
	return why + " (/dev/kfd is present: the GPUs may not be supported by this ROCm release)"
}

// GetDeviceProperties fills DeviceProps from hipDeviceGetAttribute, hipDeviceGetName,
// hipDeviceTotalMem and, for gcnArchName (which no attribute carries from ROCm 6.0 on),
// hipGetDeviceProperties. The warp size HIP reports is checked against the one the
// architecture implies; a mismatch is logged with both, and HIP's figure is kept.
func (p *Platform) GetDeviceProperties(device int) (hipsys.DeviceProps, error) {
	var d hipsys.DeviceProps
	var nameBuf [256]C.char
	// SAFETY: nameBuf is Go memory lent for the call; HIP writes at most len-1 bytes + NUL.
	if err := check("hipDeviceGetName", C.amdt_devname(p.lib.s.deviceGetName, &nameBuf[0], C.int(len(nameBuf)), C.int(device))); err != nil {
		return d, err
	}
	d.Name = C.GoString(&nameBuf[0])
	var total C.size_t
	if err := check("hipDeviceTotalMem", C.amdt_size_i(p.lib.s.deviceTotalMem, &total, C.int(device))); err != nil {
		return d, err
	}
	d.TotalMem = uint64(total)
	attr := func(a int) int {
		var v C.int
		if C.amdt_attr(p.lib.s.deviceGetAttribute, &v, C.int(a), C.int(device)) != 0 {
			return 0 // an attribute a release does not know reads as 0, as in hipDeviceProp_t
		}
		return int(v)
	}
	var v C.int
	if err := check("hipDeviceGetAttribute", C.amdt_attr(p.lib.s.deviceGetAttribute, &v, attrWarpSize, C.int(device))); err != nil {
		return d, err
	}
	d.WarpSize = int(v)
	d.MultiProcessorCount = attr(attrMultiprocessors)
	d.ClockRateKHz = attr(attrClockRate)
	d.SharedMemPerBlock = uint64(attr(attrSharedPerBlock))
	// A workgroup may use all of it without asking: AMD has no opt-in beyond it.
	d.SharedMemPerBlockOptin = d.SharedMemPerBlock
	d.MaxSharedMemPerMultiProcessor = uint64(attr(attrSharedPerCU))
	d.RegsPerBlock = attr(attrRegsPerBlock)
	d.MaxThreadsPerBlock = attr(attrMaxThreadsPerBlock)
	for i := range 3 {
		d.MaxThreadsDim[i] = attr(attrMaxBlockDimX + i)
		d.MaxGridSize[i] = attr(attrMaxGridDimX + i)
	}
	d.L2CacheSize = attr(attrL2CacheSize)
	d.Major, d.Minor = attr(attrMajor), attr(attrMinor)
	d.TextureAlignment = uint64(attr(attrTextureAlignment))
	d.SurfaceAlignment = uint64(attr(attrSurfaceAlignment))
	d.Integrated = attr(attrIntegrated) != 0
	d.ConcurrentKernels = attr(attrConcurrentKernels) != 0
	d.PCIBusID, d.PCIDeviceID, d.PCIDomainID = attr(attrPCIBusID), attr(attrPCIDeviceID), attr(attrPCIDomainID)

	arch, err := p.archName(device, d.WarpSize)
	if err != nil {
		return d, err
	}
	d.ArchName = arch
	if err := CheckWarpSize(arch, d.WarpSize); err != nil {
		slog.Warn("amd: device warp size disagrees with its architecture", "device", device, "err", err)
	}
	p.propsMu.Lock()
	p.props[device] = d
	p.propsMu.Unlock()
	return d, nil
}

// archName reads gcnArchName out of the hipDeviceProp_t that the resolved
// hipGetDeviceProperties fills. The buffer is larger than any layout, so a release that
// grows the struct cannot write past it.
func (p *Platform) archName(device, warp int) (string, error) {
	var buf [8192]byte
	// SAFETY: buf is Go memory lent for the call and larger than hipDeviceProp_t of any
	// ROCm release (1472 bytes in 7.x); HIP keeps no pointer to it.
	if err := check(p.lib.s.propsLayout.call, C.amdt_props(p.lib.s.getDeviceProperties, unsafe.Pointer(&buf[0]), C.int(device))); err != nil {
		return "", err
	}
	arch, err := p.lib.s.propsLayout.arch(buf[:], warp)
	if err != nil {
		return "", invalid(p.lib.s.propsLayout.call, hipsys.ErrorUnknown, err.Error())
	}
	return arch, nil
}

// SetDevice is hipSetDevice: current device of the calling OS thread, as in HIP.
func (p *Platform) SetDevice(device int) error {
	return check("hipSetDevice", C.amdt_int_i(p.lib.s.setDevice, C.int(device)))
}

// GetDevice is hipGetDevice.
func (p *Platform) GetDevice() (int, error) {
	var d C.int
	if err := check("hipGetDevice", C.amdt_int_p(p.lib.s.getDevice, &d)); err != nil {
		return 0, err
	}
	return int(d), nil
}

// DeviceSynchronize is hipDeviceSynchronize; it blocks until the current device is idle.
func (p *Platform) DeviceSynchronize() error {
	return check("hipDeviceSynchronize", C.amdt_void(p.lib.s.deviceSynchronize))
}

// MemGetInfo is hipMemGetInfo for the current device.
func (p *Platform) MemGetInfo() (free, total uint64, err error) {
	var f, t C.size_t
	if err := check("hipMemGetInfo", C.amdt_two_sizes(p.lib.s.memGetInfo, &f, &t)); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// warpSizeOf is the wavefront size an AMD architecture runs HIP kernels with: 64 on GCN
// and CDNA (gfx6 to gfx9, gfx940 and gfx950 included), 32 on RDNA (gfx10, gfx11, gfx12),
// whose compilers default to wave32. 0 for a name that is none of these.
func warpSizeOf(arch string) int {
	base, _, _ := strings.Cut(arch, ":")
	switch {
	case !strings.HasPrefix(base, "gfx") || len(base) < 6:
		return 0
	case strings.HasPrefix(base, "gfx1") && len(base) >= 7:
		return 32
	case base[3] >= '6' && base[3] <= '9':
		return 64
	}
	return 0
}
