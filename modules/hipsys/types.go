package hipsys

import "unsafe"

// DevicePtr is an address in the device's memory (hipDeviceptr_t). It is an integer, not a
// Go pointer: Go must never dereference device memory, and the garbage collector must
// never trace it. Offsets into an allocation are plain additions (p + 256), because the
// memory pools above hand out sub-ranges of pages.
type DevicePtr uintptr

// HostPtr is the address of host memory the platform allocated (hipHostMalloc). It is C
// memory, outside the Go heap, which is what lets an async copy keep using it after the
// call returns (cgo forbids that for Go memory).
type HostPtr uintptr

// Bytes views n bytes of pinned host memory as a slice. The view is valid until
// HostFree; using it after that is a use-after-free, as in C.
func (p HostPtr) Bytes(n int) []byte {
	if p == 0 || n <= 0 {
		return nil
	}
	// p is C memory, outside the Go heap, so turning the integer back into a pointer is
	// sound; reading it through a pointer-typed view keeps vet's uintptr check quiet.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	return unsafe.Slice((*byte)(base), n)
}

// Handles. Each is opaque: a platform gives it out and takes it back, and checks it on
// the way in where it can, so a stale or invented handle is hipErrorInvalidHandle rather
// than a crash. The zero Stream is HIP's null (default) stream; the zero value of every
// other handle is never valid.
type (
	Stream    uintptr // hipStream_t
	Event     uintptr // hipEvent_t
	Module    uintptr // hipModule_t
	Function  uintptr // hipFunction_t
	Graph     uintptr // hipGraph_t
	GraphExec uintptr // hipGraphExec_t
	GraphNode uintptr // hipGraphNode_t
	Program   uintptr // hiprtcProgram
)

// NullStream is HIP's default stream.
const NullStream Stream = 0

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Count is the number of threads (or blocks) the shape holds, in 64 bits so that a
// maximal grid does not overflow.
func (d Dim3) Count() uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

// StreamFlags are hipStreamCreateWithFlags' flags.
type StreamFlags uint32

const (
	StreamDefault     StreamFlags = 0
	StreamNonBlocking StreamFlags = 1 // no implicit sync with the null stream
)

// EventFlags are hipEventCreateWithFlags' flags.
type EventFlags uint32

const (
	EventDefault       EventFlags = 0 // timing enabled
	EventBlockingSync  EventFlags = 1
	EventDisableTiming EventFlags = 2
	EventInterprocess  EventFlags = 4
)

// HostMallocFlags are hipHostMalloc's flags.
type HostMallocFlags uint32

const (
	HostMallocDefault  HostMallocFlags = 0
	HostMallocPortable HostMallocFlags = 1
	HostMallocMapped   HostMallocFlags = 2
)

// MemcpyKind is hipMemcpyKind.
type MemcpyKind int32

const (
	MemcpyHostToHost     MemcpyKind = 0
	MemcpyHostToDevice   MemcpyKind = 1
	MemcpyDeviceToHost   MemcpyKind = 2
	MemcpyDeviceToDevice MemcpyKind = 3
	MemcpyDefault        MemcpyKind = 4
)

// Copy2D is a pitched copy (hipMemcpy2D): Height rows of Width bytes, rows DstPitch and
// SrcPitch bytes apart. Dst and Src are device addresses or pinned host addresses
// (HostPtr) as Kind says; host memory here is always platform (C) memory, never Go memory,
// so the sync and async forms take the same description.
type Copy2D struct {
	Dst      uintptr
	DstPitch uint64
	Src      uintptr
	SrcPitch uint64
	Width    uint64 // bytes per row
	Height   uint64 // rows
	Kind     MemcpyKind
}

// CaptureMode is hipStreamCaptureMode.
type CaptureMode int32

const (
	CaptureModeGlobal      CaptureMode = 0
	CaptureModeThreadLocal CaptureMode = 1
	CaptureModeRelaxed     CaptureMode = 2
)

// CaptureStatus is hipStreamCaptureStatus.
type CaptureStatus int32

const (
	CaptureStatusNone        CaptureStatus = 0
	CaptureStatusActive      CaptureStatus = 1
	CaptureStatusInvalidated CaptureStatus = 2
)

// GraphNodeType is hipGraphNodeType (the same numbers as CUgraphNodeType).
type GraphNodeType int32

const (
	GraphNodeKernel      GraphNodeType = 0
	GraphNodeMemcpy      GraphNodeType = 1
	GraphNodeMemset      GraphNodeType = 2
	GraphNodeHost        GraphNodeType = 3
	GraphNodeGraph       GraphNodeType = 4
	GraphNodeEmpty       GraphNodeType = 5
	GraphNodeWaitEvent   GraphNodeType = 6
	GraphNodeEventRecord GraphNodeType = 7
	GraphNodeMemAlloc    GraphNodeType = 10
	GraphNodeMemFree     GraphNodeType = 11
)

// Header is an in-memory header handed to hiprtc (hiprtcCreateProgram's headers and
// includeNames).
type Header struct {
	Name   string // the name #include uses
	Source string
}

// DeviceProps is the part of hipDeviceProp_t that cubehip and its users read.
type DeviceProps struct {
	Name                string // "AMD Instinct MI250X", "NVIDIA H200", the CPU's brand string
	ArchName            string // gcnArchName: "gfx90a:sramecc+:xnack-", "sm_90", "x86-64-v3"
	TotalMem            uint64 // bytes of device memory
	WarpSize            int    // 64 on CDNA, 32 on RDNA and NVIDIA, 32 (or 64) on the cpu platform
	MultiProcessorCount int
	ClockRateKHz        int
	SharedMemPerBlock   uint64
	// SharedMemPerBlockOptin is the most dynamic shared memory one block may ask for:
	// over SharedMemPerBlock on NVIDIA, where the platform opts each kernel in to it
	// (the function attribute MAX_DYNAMIC_SHARED_SIZE_BYTES) at its first launch that
	// needs it; SharedMemPerBlock elsewhere.
	SharedMemPerBlockOptin        uint64
	MaxSharedMemPerMultiProcessor uint64
	RegsPerBlock                  int
	MaxThreadsPerBlock            int
	MaxThreadsDim                 [3]int
	MaxGridSize                   [3]int
	L2CacheSize                   int
	Major, Minor                  int // compute capability (nvidia), gfx version (amd), 0.0 on cpu
	TextureAlignment              uint64
	SurfaceAlignment              uint64
	Integrated                    bool // shares memory with the host
	ConcurrentKernels             bool
	PCIBusID                      int
	PCIDeviceID                   int
	PCIDomainID                   int
}

// ParamKind says what a kernel parameter is, where the platform can tell.
type ParamKind uint8

const (
	ParamUnknown ParamKind = iota // the platform knows the size and offset only (nvidia)
	ParamPointer                  // a device pointer: a buffer argument
	ParamValue                    // a by-value scalar or struct
)

// KernelParam is one parameter of a compiled kernel: where it sits in the parameter
// block, how many bytes it takes, and (where the platform knows) what it is and its name.
type KernelParam struct {
	Offset, Size uint32
	Kind         ParamKind
	Name         string // the source's name where the platform keeps it ("" otherwise)
}
