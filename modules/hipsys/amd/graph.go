package amd

// #include "trampolines.h"
import "C"

import (
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// StreamBeginCapture is hipStreamBeginCapture: work queued on s is recorded, not run.
func (p *Platform) StreamBeginCapture(s hipsys.Stream, mode hipsys.CaptureMode) error {
	const call = "hipStreamBeginCapture"
	if err := p.stream(call, s); err != nil {
		return err
	}
	return check(call, C.amdt_hi(p.lib.s.streamBeginCapture, C.uintptr_t(s), C.int(mode)))
}

// StreamEndCapture is hipStreamEndCapture; the graph is the caller's until GraphDestroy.
func (p *Platform) StreamEndCapture(s hipsys.Stream) (hipsys.Graph, error) {
	const call = "hipStreamEndCapture"
	if err := p.stream(call, s); err != nil {
		return 0, err
	}
	var g C.uintptr_t
	// SAFETY: g is a Go variable lent for the call; HIP writes the graph handle into it.
	if err := check(call, C.amdt_h_out(p.lib.s.streamEndCapture, C.uintptr_t(s), unsafe.Pointer(&g))); err != nil {
		return 0, err
	}
	p.graphs.add(uintptr(g), 0)
	return hipsys.Graph(g), nil
}

// StreamIsCapturing is hipStreamIsCapturing.
func (p *Platform) StreamIsCapturing(s hipsys.Stream) (hipsys.CaptureStatus, error) {
	const call = "hipStreamIsCapturing"
	if err := p.stream(call, s); err != nil {
		return 0, err
	}
	var st C.int
	// SAFETY: st is a Go variable lent for the call (hipStreamCaptureStatus is an int enum).
	if err := check(call, C.amdt_h_out(p.lib.s.streamIsCapturing, C.uintptr_t(s), unsafe.Pointer(&st))); err != nil {
		return 0, err
	}
	return hipsys.CaptureStatus(st), nil
}

// GraphGetNodes is hipGraphGetNodes, called twice: for the count, then for the nodes.
// The nodes belong to the graph and are retired with it.
func (p *Platform) GraphGetNodes(g hipsys.Graph) ([]hipsys.GraphNode, error) {
	const call = "hipGraphGetNodes"
	if !p.graphs.has(uintptr(g)) {
		return nil, badHandle(call, "graph")
	}
	var n C.size_t
	if err := check(call, C.amdt_graph_nodes(p.lib.s.graphGetNodes, C.uintptr_t(g), nil, &n)); err != nil || n == 0 {
		return nil, err
	}
	raw := make([]C.uintptr_t, n)
	// SAFETY: raw is Go memory of n handles lent for the call; HIP writes at most n.
	if err := check(call, C.amdt_graph_nodes(p.lib.s.graphGetNodes, C.uintptr_t(g), &raw[0], &n)); err != nil {
		return nil, err
	}
	nodes := make([]hipsys.GraphNode, int(n))
	for i := range nodes {
		nodes[i] = hipsys.GraphNode(raw[i])
		p.nodes.add(uintptr(raw[i]), uintptr(g))
	}
	return nodes, nil
}

// GraphNodeGetType is hipGraphNodeGetType.
func (p *Platform) GraphNodeGetType(node hipsys.GraphNode) (hipsys.GraphNodeType, error) {
	const call = "hipGraphNodeGetType"
	if !p.nodes.has(uintptr(node)) {
		return 0, badHandle(call, "graph node")
	}
	var t C.int
	// SAFETY: t is a Go variable lent for the call (hipGraphNodeType is an int enum).
	if err := check(call, C.amdt_h_out(p.lib.s.graphNodeGetType, C.uintptr_t(node), unsafe.Pointer(&t))); err != nil {
		return 0, err
	}
	return hipsys.GraphNodeType(t), nil
}

// GraphInstantiate is hipGraphInstantiate(exec, graph, NULL, NULL, 0).
func (p *Platform) GraphInstantiate(g hipsys.Graph) (hipsys.GraphExec, error) {
	const call = "hipGraphInstantiate"
	if !p.graphs.has(uintptr(g)) {
		return 0, badHandle(call, "graph")
	}
	var e C.uintptr_t
	if err := check(call, C.amdt_instantiate(p.lib.s.graphInstantiate, &e, C.uintptr_t(g))); err != nil {
		return 0, err
	}
	p.execs.add(uintptr(e), 0)
	return hipsys.GraphExec(e), nil
}

// GraphUpload is hipGraphUpload. ROCm 5.2 lacks it; there a launch uploads the graph
// itself, so doing nothing is the faithful answer rather than hipErrorNotSupported.
func (p *Platform) GraphUpload(e hipsys.GraphExec, s hipsys.Stream) error {
	const call = "hipGraphUpload"
	if !p.execs.has(uintptr(e)) {
		return badHandle(call, "graph exec")
	}
	if err := p.stream(call, s); err != nil || p.lib.s.graphUpload == nil {
		return err
	}
	return check(call, C.amdt_hh(p.lib.s.graphUpload, C.uintptr_t(e), C.uintptr_t(s)))
}

// GraphLaunch is hipGraphLaunch: the graph's work is queued on s.
func (p *Platform) GraphLaunch(e hipsys.GraphExec, s hipsys.Stream) error {
	const call = "hipGraphLaunch"
	if !p.execs.has(uintptr(e)) {
		return badHandle(call, "graph exec")
	}
	if err := p.stream(call, s); err != nil {
		return err
	}
	return check(call, C.amdt_hh(p.lib.s.graphLaunch, C.uintptr_t(e), C.uintptr_t(s)))
}

// GraphExecDestroy is hipGraphExecDestroy.
func (p *Platform) GraphExecDestroy(e hipsys.GraphExec) error {
	if !p.execs.remove(uintptr(e)) {
		return badHandle("hipGraphExecDestroy", "graph exec")
	}
	return check("hipGraphExecDestroy", C.amdt_h(p.lib.s.graphExecDestroy, C.uintptr_t(e)))
}

// GraphDestroy is hipGraphDestroy; the graph's nodes are retired with it. An instantiated
// GraphExec stays valid, as in HIP.
func (p *Platform) GraphDestroy(g hipsys.Graph) error {
	if !p.graphs.remove(uintptr(g)) {
		return badHandle("hipGraphDestroy", "graph")
	}
	p.nodes.removeOwned(uintptr(g))
	return check("hipGraphDestroy", C.amdt_h(p.lib.s.graphDestroy, C.uintptr_t(g)))
}
