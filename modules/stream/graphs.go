package stream

import (
	"errors"
	"sync/atomic"
)

// ErrUnknownGraph is replay's error for a graph id it does not hold.
var ErrUnknownGraph = errors.New("replay was given an unknown or already-destroyed graph")

var lastGraphID atomic.Uint64

// NewGraphID returns a process-unique graph id (never 0), as CubeCL's GraphId::new does:
// ids are never reused, so a stale id is always unknown rather than another graph.
func NewGraphID() GraphID { return GraphID(lastGraphID.Add(1)) }

// Captures is the server's registry of instantiated graphs (the seed's Captures): each
// with the stream that captured it, whose info cache holds its pins.
//
// It is used by the server's owner only; it is not safe for concurrent use.
type Captures struct {
	graphs map[GraphID]captured
}

type captured struct {
	g *Graph
	s *Stream
}

// Insert registers g, captured on s, under id.
func (c *Captures) Insert(id GraphID, s *Stream, g *Graph) {
	if c.graphs == nil {
		c.graphs = make(map[GraphID]captured)
	}
	c.graphs[id] = captured{g: g, s: s}
}

// Contains reports whether id names a live graph.
func (c *Captures) Contains(id GraphID) bool {
	_, ok := c.graphs[id]
	return ok
}

// Len is the number of live graphs.
func (c *Captures) Len() int { return len(c.graphs) }

// ExtendWritten appends the buffers id's replays write to *set (nothing for an unknown
// id). The bindings are uncounted views: the graph keeps the memory.
func (c *Captures) ExtendWritten(id GraphID, set *[]Binding) {
	if e, ok := c.graphs[id]; ok {
		*set = append(*set, e.g.Written...)
	}
}

// ExtendUsed appends every buffer id's replays use to *used, and those they only read
// to *reads (nothing for an unknown id): uncounted views, which the graph keeps alive.
func (c *Captures) ExtendUsed(id GraphID, used, reads *[]Binding) {
	if e, ok := c.graphs[id]; ok {
		*used = append(*used, e.g.Used...)
		*reads = append(*reads, e.g.Reads...)
	}
}

// Replay launches id on s (hipGraphLaunch), returning at enqueue time. An unknown id is
// ErrUnknownGraph. The caller runs it inside a scope over the graph's write set, so that
// a failed launch taints the set and the next successful one releases it.
func (c *Captures) Replay(id GraphID, s *Stream) error {
	e, ok := c.graphs[id]
	if !ok {
		return ErrUnknownGraph
	}
	if err := s.m.p.GraphLaunch(e.g.Exec, s.Sys); err != nil {
		return stepError("replay: hipGraphLaunch", err)
	}
	return nil
}

// Destroy removes id and destroys its graph (executable, retained slices, pins, and the
// info-cache pins on the stream that captured it). The caller has waited for in-flight
// replays. Destroying an unknown id does nothing, so a double release is harmless.
func (c *Captures) Destroy(id GraphID) error {
	e, ok := c.graphs[id]
	if !ok {
		return nil
	}
	delete(c.graphs, id)
	return e.s.DestroyGraph(id, e.g)
}
