package cpu

import (
	"github.com/cubehip/cubehip/modules/hipsys"
)

// graph is a captured sequence of commands, in capture order (the cpu platform
// captures one stream, so the graph is a chain).
type graph struct {
	nodes   []command
	handles []hipsys.GraphNode
}

// graphNode is the handle-side view of one node.
type graphNode struct {
	typ hipsys.GraphNodeType
}

// graphExec is an instantiated graph: its own copy of the commands, so that destroying
// the graph (as CubeCL does right after instantiating) leaves it launchable.
type graphExec struct {
	nodes []command
}

func (p *Platform) newGraph(nodes []command) hipsys.Graph {
	g := &graph{nodes: nodes, handles: make([]hipsys.GraphNode, len(nodes))}
	for i := range nodes {
		g.handles[i] = hipsys.GraphNode(p.nodes.add(&graphNode{typ: nodes[i].nodeType()}))
	}
	return hipsys.Graph(p.graphs.add(g))
}

func (p *Platform) graph(call string, h hipsys.Graph) (*graph, error) {
	if g := p.graphs.get(uintptr(h)); g != nil {
		return g, nil
	}
	return nil, errorf(call, hipsys.ErrorInvalidHandle, "unknown or destroyed graph")
}

func (p *Platform) graphExec(call string, h hipsys.GraphExec) (*graphExec, error) {
	if x := p.execs.get(uintptr(h)); x != nil {
		return x, nil
	}
	return nil, errorf(call, hipsys.ErrorInvalidHandle, "unknown or destroyed graph exec")
}

// GraphGetNodes lists the graph's nodes in capture order. The slice is the caller's.
func (p *Platform) GraphGetNodes(h hipsys.Graph) ([]hipsys.GraphNode, error) {
	g, err := p.graph("hipGraphGetNodes", h)
	if err != nil {
		return nil, err
	}
	return append([]hipsys.GraphNode(nil), g.handles...), nil
}

// GraphNodeGetType is the node's type: Kernel, Memcpy, Memset, EventRecord or
// WaitEvent (the cpu platform records no allocation nodes).
func (p *Platform) GraphNodeGetType(h hipsys.GraphNode) (hipsys.GraphNodeType, error) {
	n := p.nodes.get(uintptr(h))
	if n == nil {
		return 0, errorf("hipGraphNodeGetType", hipsys.ErrorInvalidHandle, "unknown or destroyed graph node")
	}
	return n.typ, nil
}

// GraphInstantiate snapshots the graph into an executable one; kernel arguments are
// copied, so later changes to the graph (or its destruction) do not affect it.
func (p *Platform) GraphInstantiate(h hipsys.Graph) (hipsys.GraphExec, error) {
	g, err := p.graph("hipGraphInstantiate", h)
	if err != nil {
		return 0, err
	}
	x := &graphExec{nodes: make([]command, len(g.nodes))}
	for i := range g.nodes {
		x.nodes[i].assign(&g.nodes[i])
	}
	return hipsys.GraphExec(p.execs.add(x)), nil
}

// GraphUpload checks its handles; there is nothing to stage on the host device.
func (p *Platform) GraphUpload(h hipsys.GraphExec, sh hipsys.Stream) error {
	const call = "hipGraphUpload"
	if _, err := p.graphExec(call, h); err != nil {
		return err
	}
	_, err := p.stream(call, sh)
	return err
}

// GraphLaunch queues every node of the graph on the stream, in order and with nothing
// interleaved, and returns at once. Copy and memset nodes are checked against the live
// allocations first, so a graph that outlived its buffers fails with
// hipErrorInvalidValue instead of writing freed memory; kernel arguments are not (the
// platform cannot tell pointers from scalars).
func (p *Platform) GraphLaunch(h hipsys.GraphExec, sh hipsys.Stream) error {
	const call = "hipGraphLaunch"
	x, err := p.graphExec(call, h)
	if err != nil {
		return err
	}
	s, err := p.stream(call, sh)
	if err != nil {
		return err
	}
	for i := range x.nodes {
		if !p.rangesLive(&x.nodes[i]) {
			return errorf(call, hipsys.ErrorInvalidValue, "a copy or memset node's memory was freed")
		}
	}
	return s.enqueueAll(call, x.nodes)
}

// GraphExecDestroy forgets the executable graph. Launches already queued still run
// (they hold their own copies of the commands).
func (p *Platform) GraphExecDestroy(h hipsys.GraphExec) error {
	if p.execs.remove(uintptr(h)) == nil {
		return errorf("hipGraphExecDestroy", hipsys.ErrorInvalidHandle, "unknown or destroyed graph exec")
	}
	return nil
}

// GraphDestroy forgets the graph and its node handles. Executable graphs instantiated
// from it are unaffected.
func (p *Platform) GraphDestroy(h hipsys.Graph) error {
	g := p.graphs.remove(uintptr(h))
	if g == nil {
		return errorf("hipGraphDestroy", hipsys.ErrorInvalidHandle, "unknown or destroyed graph")
	}
	for _, n := range g.handles {
		p.nodes.remove(uintptr(n))
	}
	return nil
}

// enqueueAll queues copies of cmds as one unit: no other command lands between them.
func (s *stream) enqueueAll(call string, cmds []command) error {
	nullSeq := s.nullDependency()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capture != nil {
		for i := range cmds {
			if err := s.capture.add(call, &cmds[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if s.closing {
		return errorf(call, hipsys.ErrorInvalidHandle, "stream destroyed")
	}
	// Back-pressure once, before the unit: waiting in the middle would let another
	// producer's commands in between the graph's nodes.
	for len(s.pending) >= maxPending {
		s.waiters++
		s.done.Wait()
		s.waiters--
	}
	s.legacyWaits(nullSeq)
	for i := range cmds {
		s.submitOne(&cmds[i])
	}
	return nil
}
