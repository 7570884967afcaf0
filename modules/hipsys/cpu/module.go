package cpu

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// module is a loaded code object. use is held (read side) by every kernel while it
// runs, so ModuleUnload cannot unmap code a worker is executing.
type module struct {
	p      *Platform // for a checked launch's regions
	jm     *jit.Module
	use    sync.RWMutex
	closed atomic.Bool

	mu      sync.Mutex
	fns     map[string]hipsys.Function // one handle per entry point, dropped on unload
	globals map[uintptr]struct{}       // the variables ModuleGetGlobal handed out, by address
}

// function is a kernel entry point of a module.
type function struct {
	mod *module
	jf  *jit.Function
	// maxDynShared is the function's MAX_DYNAMIC_SHARED_SIZE_BYTES, what a launch of it
	// may ask for: all the device has beside the static variables until FuncSetAttribute
	// lowers it (the cpu device needs no opt-in). carveout is its
	// PREFERRED_SHARED_MEMORY_CARVEOUT, kept for the getter only: the host has no L1 to
	// divide.
	maxDynShared atomic.Uint32
	carveout     atomic.Int32
}

func newFunction(m *module, jf *jit.Function) *function {
	f := &function{mod: m, jf: jf}
	f.maxDynShared.Store(uint32(sharedMemPerBlock - jf.StaticSharedBytes()))
	f.carveout.Store(-1)
	return f
}

// launch runs the kernel unless its module has been unloaded since the launch was
// queued (or captured: an executable graph can outlive the module).
func (f *function) launch(c *command) error {
	f.mod.use.RLock()
	defer f.mod.use.RUnlock()
	if f.mod.closed.Load() {
		return errorf(launchCall(c.coop), hipsys.ErrorInvalidHandle, "module unloaded before the launch ran")
	}
	if f.jf.Checked() && f.mod.p != nil {
		if c.coop {
			if err := jit.CheckCooperative(c.grid, c.block, c.shmem); err != nil {
				return err
			}
		}
		return f.jf.LaunchChecked(c.grid, c.block, c.shmem, c.params, c.offsets, c.coop, f.mod.p.checkRegions())
	}
	if c.coop {
		return f.jf.LaunchCooperative(c.grid, c.block, c.shmem, c.params, c.offsets)
	}
	return f.jf.Launch(c.grid, c.block, c.shmem, c.params, c.offsets)
}

// launchCall is the HIP call a launch's errors name.
func launchCall(coop bool) string {
	if coop {
		return "hipModuleLaunchCooperativeKernel"
	}
	return "hipModuleLaunchKernel"
}

// ModuleLoadData loads a code object from RTCGetCode. The image is not retained.
func (p *Platform) ModuleLoadData(image []byte) (hipsys.Module, error) {
	if len(image) == 0 {
		return 0, errorf("hipModuleLoadData", hipsys.ErrorInvalidImage, "empty image")
	}
	jm, err := jit.Load(image)
	if err != nil {
		return 0, err
	}
	return hipsys.Module(p.modules.add(&module{p: p, jm: jm, fns: map[string]hipsys.Function{}, globals: map[uintptr]struct{}{}})), nil
}

// ModuleGetFunction finds an extern "C" __global__ entry point by its name, or a kernel
// a name expression of the program designated by its lowered name (RTCGetLoweredName).
// Asking twice for one name gives the same handle.
func (p *Platform) ModuleGetFunction(mh hipsys.Module, name string) (hipsys.Function, error) {
	const call = "hipModuleGetFunction"
	m := p.modules.get(uintptr(mh))
	if m == nil {
		return 0, errorf(call, hipsys.ErrorInvalidHandle, "unknown or unloaded module")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.fns[name]; ok {
		return h, nil
	}
	jf, err := m.jm.Function(name)
	if err != nil {
		return 0, err
	}
	h := hipsys.Function(p.functions.add(newFunction(m, jf)))
	m.fns[name] = h
	return h, nil
}

// ModuleUnload waits for the work queued on every stream, then unloads the module; its
// function handles become invalid, and a graph that still launches one of its kernels
// fails on the stream with hipErrorInvalidHandle.
func (p *Platform) ModuleUnload(mh hipsys.Module) error {
	m := p.modules.remove(uintptr(mh))
	if m == nil {
		return errorf("hipModuleUnload", hipsys.ErrorInvalidHandle, "unknown or unloaded module")
	}
	p.waitAll()
	m.mu.Lock()
	for _, h := range m.fns {
		p.functions.remove(uintptr(h))
	}
	p.dropGlobals(m)
	m.mu.Unlock()
	m.use.Lock()
	m.closed.Store(true)
	m.use.Unlock()
	return m.jm.Close()
}

// ModuleLaunchKernel checks the launch and queues it on the stream, returning at once.
// The arguments are copied, so args may be reused as soon as the call returns. A shape
// the device cannot run (a zero dimension, one over MaxThreadsDim or MaxGridSize, a
// block over MaxThreadsPerBlock) is hipErrorInvalidConfiguration here; dynamic shared
// memory over SharedMemPerBlock or over the function's MAX_DYNAMIC_SHARED_SIZE_BYTES
// (FuncSetAttribute), an argument block over jit.MaxParamBytes, or arguments
// whose number or sizes differ from the kernel's parameters is hipErrorInvalidValue. A
// failure while the kernel runs is reported by the next synchronization that waits for
// it (see the package doc). Kernel pointer arguments are not checked: a kernel that
// writes out of bounds corrupts or crashes the process.
func (p *Platform) ModuleLaunchKernel(fh hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, sh hipsys.Stream, args *hipsys.KernelArgs) error {
	return p.launch("hipModuleLaunchKernel", false, fh, grid, block, sharedMemBytes, sh, args)
}

// ModuleLaunchCooperativeKernel is ModuleLaunchKernel with every block of the grid
// running at once, each on an OS thread of its own (jit.Function.LaunchCooperative), so
// that cooperative groups' this_grid().sync() is a barrier every block reaches. A grid of
// more blocks than jit.CooperativeLimit (ModuleOccupancyMaxActiveBlocksPerMultiprocessor
// times MultiProcessorCount) is hipErrorCooperativeLaunchTooLarge naming the limit, here,
// before anything is queued. Captured in a graph, it stays cooperative.
func (p *Platform) ModuleLaunchCooperativeKernel(fh hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, sh hipsys.Stream, args *hipsys.KernelArgs) error {
	return p.launch("hipModuleLaunchCooperativeKernel", true, fh, grid, block, sharedMemBytes, sh, args)
}

func (p *Platform) launch(call string, coop bool, fh hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, sh hipsys.Stream, args *hipsys.KernelArgs) error {
	f := p.functions.get(uintptr(fh))
	if f == nil {
		return callNamed(errUnknownFunction, coop)
	}
	if !shapeOK(grid, block) {
		return callNamed(errLaunchShape, coop)
	}
	if sharedMemBytes > sharedMemPerBlock {
		return callNamed(errLaunchShared, coop)
	}
	if sharedMemBytes > f.maxDynShared.Load() {
		return callNamed(errLaunchSharedAttr, coop)
	}
	if coop {
		if err := jit.CheckCooperative(grid, block, sharedMemBytes); err != nil {
			return err
		}
	}
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	t := command{kind: cmdLaunch, fn: f, coop: coop, grid: grid, block: block, shmem: sharedMemBytes}
	if args != nil {
		if len(args.Buffer()) > jit.MaxParamBytes {
			return callNamed(errLaunchParams, coop)
		}
		t.params, t.offsets = args.Buffer(), args.Offsets()
	}
	if err := checkArgs(f, args); err != nil {
		return callNamed(err, coop)
	}
	return s.enqueue(call, &t)
}

// callNamed is a launch's error as a cooperative launch names it: the preallocated
// errors name hipModuleLaunchKernel (a refused launch in a hot loop allocates nothing;
// a refused cooperative launch pays a copy).
func callNamed(err error, coop bool) error {
	var he *hipsys.Error
	if !coop || !errors.As(err, &he) || he.Call != "hipModuleLaunchKernel" {
		return err
	}
	c := *he
	c.Call = "hipModuleLaunchCooperativeKernel"
	return &c
}

// ModuleOccupancyMaxActiveBlocksPerMultiprocessor is how many blocks of blockSize threads
// with dynSharedMem bytes of dynamic shared memory one multiprocessor (a CPU) holds at once
// in a cooperative launch (jit.MaxActiveBlocksPerMultiprocessor): the threads of one
// largest block, in whole warps, within MaxSharedMemPerMultiProcessor; 0 for a block that
// cannot run. The answer is the same for every kernel.
func (p *Platform) ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fh hipsys.Function, blockSize int, dynSharedMem uint64) (int, error) {
	if p.functions.get(uintptr(fh)) == nil {
		return 0, errorf("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", hipsys.ErrorInvalidHandle, "unknown function")
	}
	return jit.MaxActiveBlocksPerMultiprocessor(blockSize, dynSharedMem), nil
}

// Preallocated: a rejected launch in a hot loop allocates nothing.
var (
	errUnknownFunction = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, "unknown function")
	errLaunchShape     = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidConfiguration,
		"grid and block dimensions must be nonzero, within MaxGridSize and MaxThreadsDim, and a block at most MaxThreadsPerBlock threads")
	errLaunchShared     = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidValue, "dynamic shared memory over SharedMemPerBlock")
	errLaunchSharedAttr = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidValue,
		"dynamic shared memory over the function's MAX_DYNAMIC_SHARED_SIZE_BYTES (hipFuncSetAttribute)")
	errLaunchParams = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidValue, "kernel argument block over jit.MaxParamBytes")
)

// shapeOK reports whether the device can run a grid of this shape.
func shapeOK(grid, block hipsys.Dim3) bool {
	g, b := jit.MaxGridDim, jit.MaxBlockDim
	return grid.X != 0 && grid.Y != 0 && grid.Z != 0 && block.X != 0 && block.Y != 0 && block.Z != 0 &&
		grid.X <= g[0] && grid.Y <= g[1] && grid.Z <= g[2] &&
		block.X <= b[0] && block.Y <= b[1] && block.Z <= b[2] &&
		block.Count() <= maxThreadsPerBlock
}

// FuncGetParams lists fn's parameters as the kernel's compiled signature gives them:
// each one's offset in the parameter block (the C++ ABI's layout: every parameter aligned
// to its type), size, and whether it is a pointer or a value. Names are not kept.
func (p *Platform) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	f := p.functions.get(uintptr(fn))
	if f == nil {
		return nil, errorf("hipFuncGetParams", hipsys.ErrorInvalidHandle, "unknown function")
	}
	return f.jf.Params(), nil
}

// FuncGetAttribute is what the cpu device knows of fn: MAX_THREADS_PER_BLOCK is the
// device's MaxThreadsPerBlock (a kernel's compiled code does not narrow it);
// SHARED_SIZE_BYTES is the static shared memory a launch of it holds
// (jit.Function.StaticSharedBytes: its module's layout, so at least the kernel's own);
// MAX_DYNAMIC_SHARED_SIZE_BYTES and PREFERRED_SHARED_MEMORY_CARVEOUT are as
// FuncSetAttribute left them (the device's shared memory less the static, and -1, until
// set). The rest are 0: it has no constant bank, no registers or local memory as a GPU
// counts them, and no PTX or GPU binary version.
func (p *Platform) FuncGetAttribute(fh hipsys.Function, attr hipsys.FuncAttribute) (int, error) {
	const call = "hipFuncGetAttribute"
	f := p.functions.get(uintptr(fh))
	if f == nil {
		return 0, errorf(call, hipsys.ErrorInvalidHandle, "unknown function")
	}
	switch attr {
	case hipsys.FuncAttributeMaxThreadsPerBlock:
		return maxThreadsPerBlock, nil
	case hipsys.FuncAttributeSharedSizeBytes:
		return int(f.jf.StaticSharedBytes()), nil
	case hipsys.FuncAttributeMaxDynamicSharedSizeBytes:
		return int(f.maxDynShared.Load()), nil
	case hipsys.FuncAttributePreferredSharedMemoryCarveout:
		return int(f.carveout.Load()), nil
	}
	if !attr.Valid() {
		return 0, errorf(call, hipsys.ErrorInvalidValue, "unknown attribute "+attr.String())
	}
	return 0, nil
}

// FuncSetAttribute sets fn's MAX_DYNAMIC_SHARED_SIZE_BYTES (0..SharedMemPerBlock less
// its static shared memory; a launch
// of fn asking for more is then hipErrorInvalidValue) or its
// PREFERRED_SHARED_MEMORY_CARVEOUT (-1..100, recorded only).
func (p *Platform) FuncSetAttribute(fh hipsys.Function, attr hipsys.FuncAttribute, value int) error {
	f := p.functions.get(uintptr(fh))
	if f == nil {
		return errorf("hipFuncSetAttribute", hipsys.ErrorInvalidHandle, "unknown function")
	}
	if err := hipsys.CheckFuncSetAttribute("cpu", attr, value, sharedMemPerBlock-f.jf.StaticSharedBytes()); err != nil {
		return err
	}
	if attr == hipsys.FuncAttributeMaxDynamicSharedSizeBytes {
		f.maxDynShared.Store(uint32(value))
	} else {
		f.carveout.Store(int32(value))
	}
	return nil
}
