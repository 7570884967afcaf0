package cpu

import (
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// module is a loaded code object. use is held (read side) by every kernel while it
// runs, so ModuleUnload cannot unmap code a worker is executing.
type module struct {
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
}

// launch runs the kernel unless its module has been unloaded since the launch was
// queued (or captured: an executable graph can outlive the module).
func (f *function) launch(c *command) error {
	f.mod.use.RLock()
	defer f.mod.use.RUnlock()
	if f.mod.closed.Load() {
		return errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, "module unloaded before the launch ran")
	}
	return f.jf.Launch(c.grid, c.block, c.shmem, c.params, c.offsets)
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
	return hipsys.Module(p.modules.add(&module{jm: jm, fns: map[string]hipsys.Function{}, globals: map[uintptr]struct{}{}})), nil
}

// ModuleGetFunction finds an extern "C" __global__ entry point. Asking twice for one
// name gives the same handle.
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
	h := hipsys.Function(p.functions.add(&function{mod: m, jf: jf}))
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
// memory over SharedMemPerBlock, an argument block over jit.MaxParamBytes, or arguments
// whose number or sizes differ from the kernel's parameters is hipErrorInvalidValue. A
// failure while the kernel runs is reported by the next synchronization that waits for
// it (see the package doc). Kernel pointer arguments are not checked: a kernel that
// writes out of bounds corrupts or crashes the process.
func (p *Platform) ModuleLaunchKernel(fh hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, sh hipsys.Stream, args *hipsys.KernelArgs) error {
	const call = "hipModuleLaunchKernel"
	f := p.functions.get(uintptr(fh))
	if f == nil {
		return errUnknownFunction
	}
	if !shapeOK(grid, block) {
		return errLaunchShape
	}
	if sharedMemBytes > sharedMemPerBlock {
		return errLaunchShared
	}
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	t := command{kind: cmdLaunch, fn: f, grid: grid, block: block, shmem: sharedMemBytes}
	if args != nil {
		if len(args.Buffer()) > jit.MaxParamBytes {
			return errLaunchParams
		}
		t.params, t.offsets = args.Buffer(), args.Offsets()
	}
	if err := checkArgs(f, args); err != nil {
		return err
	}
	return s.enqueue(call, &t)
}

// Preallocated: a rejected launch in a hot loop allocates nothing.
var (
	errUnknownFunction = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, "unknown function")
	errLaunchShape     = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidConfiguration,
		"grid and block dimensions must be nonzero, within MaxGridSize and MaxThreadsDim, and a block at most MaxThreadsPerBlock threads")
	errLaunchShared = errorf("hipModuleLaunchKernel", hipsys.ErrorInvalidValue, "dynamic shared memory over SharedMemPerBlock")
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
