package nvidia

// #include "trampolines.h"
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// graph is a captured CUgraph and the node handles given out for it, which die with it.
type graph struct {
	mu    sync.Mutex
	nodes []uintptr
}

func invalid(call, what string, h uintptr) error {
	return hipsys.NewError(platformName, call, hipsys.ErrorInvalidHandle, fmt.Sprintf("%s %#x", what, h))
}

// StreamBeginCapture starts recording the stream's work into a graph. The null stream
// cannot capture (the driver's CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
func (p *Platform) StreamBeginCapture(s hipsys.Stream, mode hipsys.CaptureMode) error {
	const call = "hipStreamBeginCapture"
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if mode < hipsys.CaptureModeGlobal || mode > hipsys.CaptureModeRelaxed {
		return hipsys.NewError(platformName, call, hipsys.ErrorInvalidValue, fmt.Sprintf("capture mode %d", mode))
	}
	return cuError(call, int32(C.cu_begin_capture(C.uintptr_t(s), C.int(mode))))
}

// StreamEndCapture ends the capture and returns its graph; an invalidated capture is
// hipErrorStreamCaptureInvalidated and leaves no graph behind.
func (p *Platform) StreamEndCapture(s hipsys.Stream) (hipsys.Graph, error) {
	const call = "hipStreamEndCapture"
	if err := p.checkStream(call, s); err != nil {
		return 0, err
	}
	var g C.uintptr_t
	if err := cuError(call, int32(C.cu_end_capture(C.uintptr_t(s), &g))); err != nil {
		if g != 0 {
			C.cu_graph_destroy(g)
		}
		return 0, err
	}
	p.graphs.put(uintptr(g), &graph{})
	return hipsys.Graph(g), nil
}

// StreamIsCapturing reports the stream's capture status.
func (p *Platform) StreamIsCapturing(s hipsys.Stream) (hipsys.CaptureStatus, error) {
	const call = "hipStreamIsCapturing"
	if err := p.checkStream(call, s); err != nil {
		return 0, err
	}
	var st C.int
	if err := cuError(call, int32(C.cu_is_capturing(C.uintptr_t(s), &st))); err != nil {
		return 0, err
	}
	return hipsys.CaptureStatus(st), nil
}

// GraphGetNodes lists the graph's nodes; each stays a valid handle until GraphDestroy.
func (p *Platform) GraphGetNodes(gh hipsys.Graph) ([]hipsys.GraphNode, error) {
	const call = "hipGraphGetNodes"
	g, ok := p.graphs.get(uintptr(gh))
	if !ok {
		return nil, invalid(call, "graph", uintptr(gh))
	}
	var n C.size_t
	if err := cuError(call, int32(C.cu_graph_nodes(C.uintptr_t(gh), nil, &n))); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	raw := make([]uintptr, n)
	// SAFETY: raw is Go memory without pointers (node handles are integers here), written
	// only during the call and at most n entries long.
	if err := cuError(call, int32(C.cu_graph_nodes(C.uintptr_t(gh), (*C.uintptr_t)(unsafe.Pointer(&raw[0])), &n))); err != nil {
		return nil, err
	}
	out := make([]hipsys.GraphNode, n)
	g.mu.Lock()
	for i, r := range raw[:n] {
		out[i] = hipsys.GraphNode(r)
		g.nodes = append(g.nodes, r)
		p.nodes.put(r, gh)
	}
	g.mu.Unlock()
	return out, nil
}

// GraphNodeGetType is the node's type; the numbers are CUDA's and HIP's alike.
func (p *Platform) GraphNodeGetType(node hipsys.GraphNode) (hipsys.GraphNodeType, error) {
	const call = "hipGraphNodeGetType"
	if !p.nodes.has(uintptr(node)) {
		return 0, invalid(call, "graph node", uintptr(node))
	}
	var t C.int
	if err := cuError(call, int32(C.cu_node_type(C.uintptr_t(node), &t))); err != nil {
		return 0, err
	}
	return hipsys.GraphNodeType(t), nil
}

// GraphInstantiate makes an executable graph; the graph may be destroyed afterwards.
func (p *Platform) GraphInstantiate(gh hipsys.Graph) (hipsys.GraphExec, error) {
	const call = "hipGraphInstantiate"
	if !p.graphs.has(uintptr(gh)) {
		return 0, invalid(call, "graph", uintptr(gh))
	}
	var e C.uintptr_t
	if err := cuError(call, int32(C.cu_graph_instantiate(&e, C.uintptr_t(gh)))); err != nil {
		return 0, err
	}
	p.execs.put(uintptr(e), struct{}{})
	return hipsys.GraphExec(e), nil
}

// GraphUpload prepares the executable graph's resources on stream ahead of its launch.
func (p *Platform) GraphUpload(e hipsys.GraphExec, s hipsys.Stream) error {
	const call = "hipGraphUpload"
	if !p.execs.has(uintptr(e)) {
		return invalid(call, "graph exec", uintptr(e))
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	return cuError(call, int32(C.cu_graph_upload(C.uintptr_t(e), C.uintptr_t(s))))
}

// GraphLaunch queues one replay of the executable graph on stream.
func (p *Platform) GraphLaunch(e hipsys.GraphExec, s hipsys.Stream) error {
	const call = "hipGraphLaunch"
	if !p.execs.has(uintptr(e)) {
		return invalid(call, "graph exec", uintptr(e))
	}
	if err := p.checkStream(call, s); err != nil {
		return err
	}
	if r := C.cu_graph_launch(C.uintptr_t(e), C.uintptr_t(s)); r != 0 {
		return cuError(call, int32(r))
	}
	return nil
}

// GraphExecDestroy destroys the executable graph once its replays complete.
func (p *Platform) GraphExecDestroy(e hipsys.GraphExec) error {
	const call = "hipGraphExecDestroy"
	if _, ok := p.execs.take(uintptr(e)); !ok {
		return invalid(call, "graph exec", uintptr(e))
	}
	return cuError(call, int32(C.cu_graph_exec_destroy(C.uintptr_t(e))))
}

// GraphDestroy destroys the graph and invalidates its node handles.
func (p *Platform) GraphDestroy(gh hipsys.Graph) error {
	const call = "hipGraphDestroy"
	g, ok := p.graphs.take(uintptr(gh))
	if !ok {
		return invalid(call, "graph", uintptr(gh))
	}
	g.mu.Lock()
	for _, n := range g.nodes {
		p.nodes.take(n)
	}
	g.mu.Unlock()
	return cuError(call, int32(C.cu_graph_destroy(C.uintptr_t(gh))))
}
