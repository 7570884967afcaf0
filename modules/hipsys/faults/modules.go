package faults

import "github.com/cubehip/cubehip/modules/hipsys"

// Module, graph and hiprtc calls.

func (w *Platform) ModuleLoadData(image []byte) (hipsys.Module, error) {
	if err := w.check(cModuleLoadData); err != nil {
		return 0, err
	}
	m, err := w.inner.ModuleLoadData(image)
	return created(w, liveModule, m, 0, err)
}

func (w *Platform) ModuleGetFunction(module hipsys.Module, name string) (hipsys.Function, error) {
	if err := w.check(cModuleGetFunction); err != nil {
		return 0, err
	}
	return w.inner.ModuleGetFunction(module, name)
}

func (w *Platform) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, stream hipsys.Stream, args *hipsys.KernelArgs) error {
	if err := w.check(cModuleLaunchKernel); err != nil {
		return err
	}
	return w.inner.ModuleLaunchKernel(fn, grid, block, sharedMemBytes, stream, args)
}

func (w *Platform) ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, stream hipsys.Stream, args *hipsys.KernelArgs) error {
	if err := w.check(cModuleLaunchCooperativeKernel); err != nil {
		return err
	}
	return w.inner.ModuleLaunchCooperativeKernel(fn, grid, block, sharedMemBytes, stream, args)
}

func (w *Platform) ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn hipsys.Function, blockSize int, dynSharedMem uint64) (int, error) {
	if err := w.check(cModuleOccupancyMaxActiveBlocksPerMultiprocessor); err != nil {
		return 0, err
	}
	return w.inner.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, blockSize, dynSharedMem)
}

func (w *Platform) ModuleUnload(module hipsys.Module) error {
	if err := w.check(cModuleUnload); err != nil {
		return err
	}
	return destroyed(w, liveModule, module, w.inner.ModuleUnload(module))
}

func (w *Platform) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	if err := w.check(cFuncGetParams); err != nil {
		return nil, err
	}
	return w.inner.FuncGetParams(fn)
}

func (w *Platform) ModuleGetGlobal(module hipsys.Module, name string) (hipsys.DevicePtr, uint64, error) {
	if err := w.check(cModuleGetGlobal); err != nil {
		return 0, 0, err
	}
	return w.inner.ModuleGetGlobal(module, name)
}

func (w *Platform) StreamBeginCapture(stream hipsys.Stream, mode hipsys.CaptureMode) error {
	if err := w.check(cStreamBeginCapture); err != nil {
		return err
	}
	return w.inner.StreamBeginCapture(stream, mode)
}

func (w *Platform) StreamEndCapture(stream hipsys.Stream) (hipsys.Graph, error) {
	if err := w.check(cStreamEndCapture); err != nil {
		return 0, err
	}
	g, err := w.inner.StreamEndCapture(stream)
	return created(w, liveGraph, g, 0, err)
}

func (w *Platform) StreamIsCapturing(stream hipsys.Stream) (hipsys.CaptureStatus, error) {
	if err := w.check(cStreamIsCapturing); err != nil {
		return hipsys.CaptureStatusNone, err
	}
	return w.inner.StreamIsCapturing(stream)
}

func (w *Platform) GraphGetNodes(graph hipsys.Graph) ([]hipsys.GraphNode, error) {
	if err := w.check(cGraphGetNodes); err != nil {
		return nil, err
	}
	return w.inner.GraphGetNodes(graph)
}

func (w *Platform) GraphNodeGetType(node hipsys.GraphNode) (hipsys.GraphNodeType, error) {
	if err := w.check(cGraphNodeGetType); err != nil {
		return 0, err
	}
	return w.inner.GraphNodeGetType(node)
}

func (w *Platform) GraphInstantiate(graph hipsys.Graph) (hipsys.GraphExec, error) {
	if err := w.check(cGraphInstantiate); err != nil {
		return 0, err
	}
	x, err := w.inner.GraphInstantiate(graph)
	return created(w, liveExec, x, 0, err)
}

func (w *Platform) GraphUpload(exec hipsys.GraphExec, stream hipsys.Stream) error {
	if err := w.check(cGraphUpload); err != nil {
		return err
	}
	return w.inner.GraphUpload(exec, stream)
}

func (w *Platform) GraphLaunch(exec hipsys.GraphExec, stream hipsys.Stream) error {
	if err := w.check(cGraphLaunch); err != nil {
		return err
	}
	return w.inner.GraphLaunch(exec, stream)
}

func (w *Platform) GraphExecDestroy(exec hipsys.GraphExec) error {
	if err := w.check(cGraphExecDestroy); err != nil {
		return err
	}
	return destroyed(w, liveExec, exec, w.inner.GraphExecDestroy(exec))
}

func (w *Platform) GraphDestroy(graph hipsys.Graph) error {
	if err := w.check(cGraphDestroy); err != nil {
		return err
	}
	return destroyed(w, liveGraph, graph, w.inner.GraphDestroy(graph))
}

func (w *Platform) RTCCreateProgram(source, name string, headers []hipsys.Header) (hipsys.Program, error) {
	if err := w.check(cRTCCreateProgram); err != nil {
		return 0, err
	}
	prog, err := w.inner.RTCCreateProgram(source, name, headers)
	return created(w, liveProgram, prog, 0, err)
}

func (w *Platform) RTCAddNameExpression(prog hipsys.Program, expr string) error {
	if err := w.check(cRTCAddNameExpression); err != nil {
		return err
	}
	return w.inner.RTCAddNameExpression(prog, expr)
}

func (w *Platform) RTCCompileProgram(prog hipsys.Program, options []string) error {
	if err := w.check(cRTCCompileProgram); err != nil {
		return err
	}
	return w.inner.RTCCompileProgram(prog, options)
}

func (w *Platform) RTCGetProgramLog(prog hipsys.Program) (string, error) {
	if err := w.check(cRTCGetProgramLog); err != nil {
		return "", err
	}
	return w.inner.RTCGetProgramLog(prog)
}

func (w *Platform) RTCGetCode(prog hipsys.Program) ([]byte, error) {
	if err := w.check(cRTCGetCode); err != nil {
		return nil, err
	}
	return w.inner.RTCGetCode(prog)
}

func (w *Platform) RTCGetLoweredName(prog hipsys.Program, expr string) (string, error) {
	if err := w.check(cRTCGetLoweredName); err != nil {
		return "", err
	}
	return w.inner.RTCGetLoweredName(prog, expr)
}

func (w *Platform) RTCDestroyProgram(prog hipsys.Program) error {
	if err := w.check(cRTCDestroyProgram); err != nil {
		return err
	}
	return destroyed(w, liveProgram, prog, w.inner.RTCDestroyProgram(prog))
}

func (w *Platform) FuncGetAttribute(fn hipsys.Function, attr hipsys.FuncAttribute) (int, error) {
	if err := w.check(cFuncGetAttribute); err != nil {
		return 0, err
	}
	return w.inner.FuncGetAttribute(fn, attr)
}

func (w *Platform) FuncSetAttribute(fn hipsys.Function, attr hipsys.FuncAttribute, value int) error {
	if err := w.check(cFuncSetAttribute); err != nil {
		return err
	}
	return w.inner.FuncSetAttribute(fn, attr, value)
}
