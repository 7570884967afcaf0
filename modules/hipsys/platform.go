package hipsys

// Platform is the HIP API as one platform implements it: amd (libamdhip64), nvidia (HIP's
// NVIDIA mapping onto the CUDA driver API) and cpu (the embedded host device), plus the
// fault-injecting wrapper in package faults. It is for implementers and for the layers
// above hipsys; the server's users never see it.
//
// Every method is safe for concurrent use. Each returns nil or an *Error naming the HIP
// call, the platform and HIP's status, and none panics on bad input: an unknown handle,
// a freed pointer, a copy past the end of an allocation or an impossible launch shape is
// HIP's status for it. As in HIP, the current device is a property of the calling OS
// thread: callers that use a device other than 0 lock their goroutine to its thread
// (runtime.LockOSThread) and call SetDevice first.
//
// Every platform implements every call; where a platform cannot do something HIP can,
// the call returns hipErrorNotSupported rather than being missing.
type Platform interface {
	// Name is "cpu", "nvidia" or "amd" (a wrapper reports the platform it wraps).
	Name() string

	DeviceAPI
	MemoryAPI
	StreamAPI
	EventAPI
	ModuleAPI
	GraphAPI
	RTCAPI
	PeerAPI
}

// DeviceAPI is device enumeration and selection (hipGetDeviceCount, hipSetDevice, ...).
type DeviceAPI interface {
	GetDeviceCount() (int, error)
	GetDeviceProperties(device int) (DeviceProps, error)
	SetDevice(device int) error // makes device current on the calling OS thread
	GetDevice() (int, error)
	DeviceSynchronize() error
	MemGetInfo() (free, total uint64, err error)
}

// MemoryAPI is device and pinned memory, memset and copies. Sync copies to and from Go
// memory take slices; async copies take pinned host memory (HostPtr), because the copy
// runs after the call returns and cgo forbids C from keeping Go memory that long.
type MemoryAPI interface {
	Malloc(size uint64) (DevicePtr, error) // size 0 gives 0 and no error, as hipMalloc
	Free(ptr DevicePtr) error              // Free(0) is a no-op, as hipFree
	HostMalloc(size uint64, flags HostMallocFlags) (HostPtr, error)
	HostFree(ptr HostPtr) error

	Memset(dst DevicePtr, value byte, size uint64) error
	MemsetAsync(dst DevicePtr, value byte, size uint64, stream Stream) error

	MemcpyHtoD(dst DevicePtr, src []byte) error
	MemcpyDtoH(dst []byte, src DevicePtr) error
	MemcpyDtoD(dst, src DevicePtr, size uint64) error
	MemcpyHtoDAsync(dst DevicePtr, src HostPtr, size uint64, stream Stream) error
	MemcpyDtoHAsync(dst HostPtr, src DevicePtr, size uint64, stream Stream) error
	MemcpyDtoDAsync(dst, src DevicePtr, size uint64, stream Stream) error
	Memcpy2D(c Copy2D) error
	Memcpy2DAsync(c Copy2D, stream Stream) error

	// ImportMemory checks that [ptr, ptr+size) is memory the current device can use as
	// its own device memory although this platform did not allocate it (another
	// library's allocation: CuPy's, PyTorch's, or on the cpu device any host memory),
	// and makes every call that takes device memory accept the range until
	// ReleaseImportedMemory. The platform never frees or moves imported memory. A null
	// ptr, a size of 0 or a range running past the end of the address space is
	// hipErrorInvalidValue; memory of another device is hipErrorInvalidDevice; memory
	// that is not this platform's device memory (host memory on a GPU, an address the
	// process has not mapped on the cpu device) or a range running past the end of its
	// allocation is hipErrorInvalidValue, saying which.
	ImportMemory(ptr DevicePtr, size uint64) error
	// ReleaseImportedMemory ends one ImportMemory of the same range; the memory itself is
	// untouched. A range that was not imported is hipErrorInvalidValue.
	ReleaseImportedMemory(ptr DevicePtr, size uint64) error
}

// StreamAPI is streams and their ordering. StreamQuery is nil when all work is done and
// ErrorNotReady (as an *Error) while some is pending.
type StreamAPI interface {
	StreamCreateWithFlags(flags StreamFlags) (Stream, error)
	StreamQuery(stream Stream) error
	StreamSynchronize(stream Stream) error
	StreamWaitEvent(stream Stream, event Event, flags uint32) error
	StreamDestroy(stream Stream) error
}

// EventAPI is events: markers in a stream with timestamps (unless created with
// EventDisableTiming). EventQuery is nil once the event has completed, ErrorNotReady
// before.
type EventAPI interface {
	EventCreateWithFlags(flags EventFlags) (Event, error)
	EventRecord(event Event, stream Stream) error
	EventQuery(event Event) error
	EventSynchronize(event Event) error
	EventElapsedTime(start, stop Event) (ms float32, err error)
	EventDestroy(event Event) error
}

// ModuleAPI loads code objects (from RTCGetCode or an ahead-of-time build) and launches
// their kernels. args may be nil for a kernel without parameters.
type ModuleAPI interface {
	ModuleLoadData(image []byte) (Module, error)
	ModuleGetFunction(module Module, name string) (Function, error)
	ModuleLaunchKernel(fn Function, grid, block Dim3, sharedMemBytes uint32, stream Stream, args *KernelArgs) error
	// ModuleLaunchCooperativeKernel is ModuleLaunchKernel with every block of the grid
	// running at once (hipModuleLaunchCooperativeKernel, cuLaunchCooperativeKernel), so
	// that blocks may wait for each other: cooperative groups' this_grid().sync() is
	// valid only in such a launch. A grid of more blocks than the device holds at once
	// (ModuleOccupancyMaxActiveBlocksPerMultiprocessor for its block and dynamic shared
	// memory, times the device's MultiProcessorCount) is hipErrorCooperativeLaunchTooLarge,
	// and nothing is launched. A platform that cannot launch cooperatively (a ROCm without
	// the call) returns hipErrorNotSupported.
	ModuleLaunchCooperativeKernel(fn Function, grid, block Dim3, sharedMemBytes uint32, stream Stream, args *KernelArgs) error
	// ModuleOccupancyMaxActiveBlocksPerMultiprocessor is how many blocks of fn, of
	// blockSize threads and dynSharedMem bytes of dynamic shared memory each, one
	// multiprocessor holds at once (hipModuleOccupancyMaxActiveBlocksPerMultiprocessor,
	// cuOccupancyMaxActiveBlocksPerMultiprocessor): 0 for a block that cannot run.
	ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn Function, blockSize int, dynSharedMem uint64) (int, error)
	// FuncGetAttribute is one of fn's attributes (hipFuncGetAttribute, cuFuncGetAttribute).
	// An attribute the platform cannot tell is 0, as its documentation says.
	FuncGetAttribute(fn Function, attr FuncAttribute) (int, error)
	// FuncSetAttribute sets one of fn's settable attributes (hipFuncSetAttribute,
	// cuFuncSetAttribute): MAX_DYNAMIC_SHARED_SIZE_BYTES, the dynamic shared memory a
	// launch of fn may ask for, up to what the device can give it (more is
	// hipErrorInvalidValue), and PREFERRED_SHARED_MEMORY_CARVEOUT (-1..100), a hint.
	// Any other attribute is hipErrorInvalidValue.
	FuncSetAttribute(fn Function, attr FuncAttribute, value int) error
	ModuleUnload(module Module) error
	// FuncGetParams lists fn's parameters in declaration order, as the platform's
	// compiler laid out the kernel's parameter block (the cpu device's compiled
	// signature, AMD's code-object metadata, the driver's cuFuncGetParamInfo). It lets
	// the layers above check a launch's arguments before anything is queued. Where the
	// platform cannot tell (a driver without the query), it is hipErrorNotSupported.
	FuncGetParams(fn Function) ([]KernelParam, error)
	// ModuleGetGlobal finds a __device__ or __constant__ variable of a loaded module by
	// its symbol name (the name as C++ writes it at global scope, the mangled name inside
	// a namespace) and gives its device address and size in bytes (hipModuleGetGlobal).
	// The address is device memory for the copy calls until the module is unloaded, so
	// the host reads and writes the variable with them, ordered on a stream like any
	// copy. An unknown name is hipErrorNotFound.
	ModuleGetGlobal(module Module, name string) (DevicePtr, uint64, error)
}

// GraphAPI is stream capture and graphs. While a stream captures, work queued on it is
// recorded instead of run; a host synchronization with the capturing stream (a sync, a
// blocking copy, hipMalloc in global mode) invalidates the capture, as in HIP.
type GraphAPI interface {
	StreamBeginCapture(stream Stream, mode CaptureMode) error
	StreamEndCapture(stream Stream) (Graph, error)
	StreamIsCapturing(stream Stream) (CaptureStatus, error)
	GraphGetNodes(graph Graph) ([]GraphNode, error)
	GraphNodeGetType(node GraphNode) (GraphNodeType, error)
	GraphInstantiate(graph Graph) (GraphExec, error)
	GraphUpload(exec GraphExec, stream Stream) error
	GraphLaunch(exec GraphExec, stream Stream) error
	GraphExecDestroy(exec GraphExec) error
	GraphDestroy(graph Graph) error
}

// RTCAPI is hiprtc: runtime compilation of HIP C++ for the current device. The code it
// gives is what ModuleLoadData takes on the same platform.
type RTCAPI interface {
	RTCCreateProgram(source, name string, headers []Header) (Program, error)
	// RTCAddNameExpression asks the compile to come to resolve expr, a C++ expression
	// naming a kernel (hiprtcAddNameExpression, nvrtcAddNameExpression): a template's
	// specialization ("reduce<float, 256>", which the compile instantiates), a C++-linkage
	// kernel ("scale", "ns::scale"), or one overload of several, told apart by a cast
	// ("(void(*)(float*, int))scale"). It is resolved as if written at global scope after
	// the source. Adding an expression twice is adding it once. Only before the program
	// compiles: after, RTCErrorNoNameExpressionsAfterCompile; an empty expr is
	// RTCErrorInvalidInput. An expression the compiler cannot resolve (an overloaded name
	// without a cast, a name the source lacks) fails RTCCompileProgram with
	// RTCErrorCompilation and the compiler's words.
	RTCAddNameExpression(prog Program, expr string) error
	// RTCCompileProgram fails with RTCErrorCompilation and the log in the error's Detail.
	RTCCompileProgram(prog Program, options []string) error
	RTCGetProgramLog(prog Program) (string, error)
	RTCGetCode(prog Program) ([]byte, error)
	// RTCGetLoweredName is the symbol the compile gave expr, an expression added with
	// RTCAddNameExpression (the same string): the mangled name ("_Z6reduceIfLi256EEvPT_i"),
	// or the name itself for an extern "C" kernel. It is the name ModuleGetFunction takes
	// in the module loaded from this program's code. Before a successful compile it is
	// RTCErrorNoLoweredNamesBeforeCompile; an expression never added is
	// RTCErrorNameExpressionNotValid.
	RTCGetLoweredName(prog Program, expr string) (string, error)
	RTCDestroyProgram(prog Program) error
}

// PeerAPI is access between the devices of one platform (hipDeviceCanAccessPeer,
// hipDeviceEnablePeerAccess, hipMemcpyPeerAsync). A peer copy moves bytes from one
// device's memory to another's without the host; it works whether or not access was
// enabled (the platform stages it otherwise), but only enabled access lets kernels
// and the fast direct path use the peer's memory.
type PeerAPI interface {
	// DeviceCanAccessPeer reports whether device can map peer's memory. A device is not
	// its own peer (false, as in HIP); an unknown device is hipErrorInvalidDevice.
	DeviceCanAccessPeer(device, peer int) (bool, error)
	// DeviceEnablePeerAccess lets the current device access peer's memory. flags must
	// be 0; enabling a pair twice is hipErrorPeerAccessAlreadyEnabled.
	DeviceEnablePeerAccess(peer int, flags uint32) error
	// MemcpyPeerAsync queues a copy of size bytes from src on srcDevice to dst on
	// dstDevice on stream. Each pointer must lie in a live allocation of its device.
	MemcpyPeerAsync(dst DevicePtr, dstDevice int, src DevicePtr, srcDevice int, size uint64, stream Stream) error
}
