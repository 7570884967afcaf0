package stream

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// Graph is an instantiated capture: the executable, the pool slices it retains (reused
// by nothing else until the graph is destroyed: the replays write them), the buffers its
// replays write, and the cross-stream bindings its recorded launches borrowed.
type Graph struct {
	Exec     hipsys.GraphExec
	Retained []memory.Handle
	Written  []Binding // uncounted: Retained and the client keep them alive
	Pins     []Binding
	// Used is every buffer the recorded work uses, once each, and Reads those of them
	// it does not write: a replay is ordered after the last write of each (as a launch
	// is after its buffers'), and refused when a read one carries a failure. Uncounted
	// views: Pins hold them.
	Used, Reads []Binding
}

// Refused is a capture that ended without a graph. Written are the buffers the recorded
// launches were given: they will now never be written by it, so the server taints them
// with Err (a read on another stream must fail), and returns Err to end_capture's
// caller.
type Refused struct {
	Err     error
	Written []Binding
}

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// PrepareCapture is graph_prepare: None → Prepare, then both memory managers are armed
// for capture (persistent mode, touched slices recorded, warm-up allocations retained),
// so the warm-up run grows the pools to the whole working set. A refused transition
// changes nothing.
func (s *Stream) PrepareCapture() error {
	if err := s.Capture.Prepare(); err != nil {
		return err
	}
	s.GPU.CaptureBegin()
	s.Pinned.CaptureBegin()
	return nil
}

// BeginCapture is begin_capture: Prepare → Recording, then two drop-queue flushes (the
// last host waits before the window opens), the end of priming on both managers (the
// warm-up's slices return to the pools, which keep their size), and
// hipStreamBeginCapture in global mode.
//
// A refused transition changes nothing and runs nothing: a flush on a stream already
// recording would abort the capture. If the driver refuses to begin, the managers'
// capture ends, the info cache's pins are discarded and the stream returns to None; the
// caller may prepare again.
func (s *Stream) BeginCapture() error {
	if err := s.Capture.Begin(); err != nil {
		return err
	}
	// The state already says recording, so flush the queue directly: the device stream
	// is not capturing yet, and these are the last host waits the window allows.
	ferr := errors.Join(s.Drops.Flush(s.m.p, s.Sys), s.Drops.Flush(s.m.p, s.Sys))
	s.GPU.CapturePrimingEnd()
	s.Pinned.CapturePrimingEnd()
	err := ferr
	if err == nil {
		// Relaxed: the capture is this stream's alone. In global mode the driver would
		// refuse, and invalidate the capture over, any other stream's blocking copy,
		// allocation or sync, from any thread; the server keeps what cannot be recorded
		// off the recording stream itself.
		err = s.m.p.StreamBeginCapture(s.Sys, hipsys.CaptureModeRelaxed)
	}
	if err != nil {
		releaseHandles(s.GPU.CaptureEnd())
		releaseHandles(s.Pinned.CaptureEnd())
		s.Info.DiscardCapture()
		pins := s.Capture.Abort()
		releaseBindings(pins)
		return fmt.Errorf("begin_capture: hipStreamBeginCapture failed: %w", err)
	}
	return nil
}

// AbortCapture ends whatever capture the stream is in, without a graph: a recording
// device capture is ended and its graph destroyed, the managers' capture ends, the info
// cache's capture pins are discarded and the pins taken while recording are released
// (the recorded work never runs). It returns the buffers the recorded work would have
// written, which the caller must leave carrying why, and reports a failure of the
// device's end (the stream is left not capturing either way, as far as the driver lets
// it). It is for a server that is closing: a capture another goroutine left open must
// not keep the device from its last wait.
func (s *Stream) AbortCapture() ([]Binding, error) {
	state := s.Capture.State()
	if state == CaptureNone {
		return nil, nil
	}
	var err error
	if state == CaptureRecording {
		var g hipsys.Graph
		if g, err = s.m.p.StreamEndCapture(s.Sys); err == nil {
			_ = s.m.p.GraphDestroy(g)
		}
	}
	written := append([]Binding(nil), s.Capture.written...)
	releaseHandles(s.GPU.CaptureEnd())
	releaseHandles(s.Pinned.CaptureEnd())
	s.Info.DiscardCapture()
	releaseBindings(s.Capture.Abort())
	if err != nil {
		return written, fmt.Errorf("abort capture: hipStreamEndCapture failed: %w", err)
	}
	return written, nil
}

// memoryNodesReason is what a graph allocating inside the window is refused for.
const memoryNodesReason = "capture recorded %d memory node(s): an allocation inside the capture " +
	"window makes the graph un-relaunchable (warm the pools in the prepare run)"

// Instantiate is end_capture's driver work: Recording → None (before sealing, so a
// failed seal cannot wedge the stream), hipStreamEndCapture, refusal of a graph with
// memory nodes, hipGraphInstantiate, refusal of a graph in which any recorded work
// failed (Differs from CubeCL, which keeps such a graph: a replay would leave the failed
// work's outputs looking written); then, however that went, the managers' capture
// ends and the drop queue is flushed twice. On success the info cache's capture pins
// are committed to id and the graph is pre-uploaded (a failed upload only means the
// first launch uploads); on refusal the pins are discarded and the retained slices
// released.
func (s *Stream) Instantiate(id GraphID) (*Graph, *Refused) {
	if err := s.Capture.End(); err != nil {
		return nil, &Refused{Err: err}
	}
	written, pins := s.Capture.Take()
	failed := s.Capture.takeFailure()
	exec, err := s.seal()
	if err == nil && failed != nil {
		// The device capture is ended either way; a graph missing failed work is not
		// kept.
		_ = s.m.p.GraphExecDestroy(exec)
		err = fmt.Errorf("end_capture: work recorded in the capture failed: %w", failed)
	}
	retained := append(s.GPU.CaptureEnd(), s.Pinned.CaptureEnd()...)
	if ferr := errors.Join(s.Drops.Flush(s.m.p, s.Sys), s.Drops.Flush(s.m.p, s.Sys)); ferr != nil {
		s.m.cfg.log.Warn("stream: drop-queue flush after capture failed", "err", ferr)
	}
	if err != nil {
		s.Info.DiscardCapture()
		releaseHandles(retained)
		// The recorded work never runs, so nothing on the device uses the pins.
		releaseBindings(pins)
		return nil, &Refused{Err: err, Written: written}
	}
	// The recorded work has not run: its outputs hold what the warm-up wrote, which is
	// what they held before the recording, so the recording's claims on them go.
	s.m.failures.releaseRecorded(written, s.slot)
	s.Info.CommitCapture(id)
	if uerr := s.m.p.GraphUpload(exec, s.Sys); uerr != nil {
		s.m.cfg.log.Debug("stream: hipGraphUpload failed; the first replay uploads", "err", uerr)
	}
	used, reads := usedAndRead(pins, written)
	return &Graph{Exec: exec, Retained: retained, Written: written, Pins: pins, Used: used, Reads: reads}, nil
}

// usedAndRead is pins once per allocation, and those of them not in written.
func usedAndRead(pins, written []Binding) (used, reads []Binding) {
	seen := make(map[memory.ID]bool, len(pins))
	for _, b := range written {
		seen[b.ID()] = true
	}
	for _, b := range pins {
		if !seen[b.ID()] {
			seen[b.ID()] = true
			reads = append(reads, b)
		}
	}
	used = append(append(used, written...), reads...)
	return used, reads
}

// seal ends the device capture and instantiates the graph, refusing one with memory
// nodes. The graph itself is always destroyed.
func (s *Stream) seal() (hipsys.GraphExec, error) {
	p := s.m.p
	g, err := p.StreamEndCapture(s.Sys)
	if err != nil {
		// A failed end can leave the device stream capturing, and then every later
		// copy, launch and sync on it fails for good: end it once more, dropping what
		// it recorded.
		if st, qerr := p.StreamIsCapturing(s.Sys); qerr == nil && st != hipsys.CaptureStatusNone {
			if g, rerr := p.StreamEndCapture(s.Sys); rerr == nil {
				_ = p.GraphDestroy(g)
			}
		}
		return 0, fmt.Errorf("end_capture: hipStreamEndCapture failed: %w", err)
	}
	if n := s.countMemoryNodes(g); n > 0 {
		_ = p.GraphDestroy(g)
		return 0, &StateError{Call: "end_capture", Reason: fmt.Sprintf(memoryNodesReason, n)}
	}
	exec, err := p.GraphInstantiate(g)
	_ = p.GraphDestroy(g)
	if err != nil {
		return 0, fmt.Errorf("end_capture: hipGraphInstantiate failed: %w", err)
	}
	return exec, nil
}

// countMemoryNodes counts MemAlloc and MemFree nodes. A failed query is logged and
// counts as none, as in CubeCL: the instantiate that follows reports a broken graph.
func (s *Stream) countMemoryNodes(g hipsys.Graph) int {
	p := s.m.p
	nodes, err := p.GraphGetNodes(g)
	if err != nil {
		s.m.cfg.log.Warn("stream: hipGraphGetNodes failed; memory nodes not counted", "err", err)
		return 0
	}
	n := 0
	for _, node := range nodes {
		t, err := p.GraphNodeGetType(node)
		if err != nil {
			s.m.cfg.log.Warn("stream: hipGraphNodeGetType failed; node not counted", "err", err)
			continue
		}
		if t == hipsys.GraphNodeMemAlloc || t == hipsys.GraphNodeMemFree {
			n++
		}
	}
	return n
}

// DestroyGraph destroys g, captured on this stream as id: the executable, its retained
// slices, its pins, and its info-cache pins. The caller waits for in-flight replays
// first (graph_destroy syncs the stream).
func (s *Stream) DestroyGraph(id GraphID, g *Graph) error {
	err := s.m.p.GraphExecDestroy(g.Exec)
	releaseHandles(g.Retained)
	releaseBindings(g.Pins)
	g.Retained, g.Pins = nil, nil
	s.Info.ReleaseGraph(id)
	return err
}

func releaseHandles(hs []memory.Handle) {
	for i := range hs {
		_ = hs[i].Release()
	}
}

func releaseBindings(bs []Binding) {
	for i := range bs {
		_ = bs[i].Release()
	}
}
