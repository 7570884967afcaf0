package server

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// GraphID names a captured graph. Ids are never reused.
type GraphID = compute.GraphID

// Graph is a captured sequence of work on one stream, replayed with one call. It keeps
// the buffers its work uses alive until Destroy; their contents are refreshed by writing
// them on the graph's stream between replays. Safe for concurrent use.
type Graph struct {
	d      *Device
	id     GraphID
	stream StreamID
	gone   bool // destroyed; guarded by d.mu
}

// ID is the graph's id; ids are never reused.
func (g *Graph) ID() GraphID { return g.id }

// Capture records run into a graph, as CubeCL does: the capture window is prepared, run
// is called once as the warm-up (it runs for real, and the pools grow to the whole
// working set, so that the recorded run allocates nothing), the recording begins, run is
// called again and its work is recorded, not run, and the graph is instantiated.
//
// run must put its work on the stream it is given. While the recording is open, work
// that other goroutines put on the same stream is recorded too; other streams' work goes
// on as usual. A buffer the recorded work writes is refused with ErrRecorded to any
// reader but that work until the capture ends (the work runs only at a replay), and then
// holds what the warm-up wrote. A warm-up or recorded run that fails ends the window and
// returns the failure. The graph is refused, and the buffers the recorded work writes
// carry the refusal, when any recorded work failed (a launch the driver refused, an
// input carrying a failure) or needed memory the warm-up did not allocate. A run that
// panics ends the window (no graph is kept) before the panic goes on.
func (s Stream) Capture(run func(Stream) error) (*Graph, error) {
	if run == nil {
		return nil, fmt.Errorf("capture: %w: nil run", ErrInvalidArgument)
	}
	// The whole capture stays on one OS thread: a goroutine may change threads between
	// calls, and some drivers end a capture only on the thread that began it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := s.PrepareCapture(); err != nil {
		return nil, err
	}
	// A run that panics must not leave the stream's window open for good (every later
	// capture on it refused): the window is walked to its end, the graph thrown away,
	// and the panic goes on.
	recording, done := false, false
	defer func() {
		if done {
			return
		}
		p := recover()
		if !recording && s.BeginCapture() == nil {
			recording = true
		}
		if recording {
			if g, _ := s.EndCapture(); g != nil {
				_ = g.Destroy()
			}
		}
		panic(p)
	}()
	warm := run(s)
	// The window is prepared: only begin and end bring it back to no capture, so a
	// failed warm-up still walks through them, and the graph is thrown away.
	if err := s.BeginCapture(); err != nil {
		done = true
		return nil, errors.Join(warm, err)
	}
	recording = true
	var rec error
	if warm == nil {
		rec = run(s)
	}
	done = true
	g, err := s.EndCapture()
	if warm != nil || rec != nil {
		if g != nil {
			_ = g.Destroy()
		}
		return nil, errors.Join(warm, rec, err)
	}
	return g, err
}

// PrepareCapture opens the stream's capture window in its prepare state; the warm-up
// run follows, then BeginCapture. Refused while a window is already open.
func (s Stream) PrepareCapture() error {
	return s.do(func() error { return s.d.srv.GraphPrepare(s.id) })
}

// BeginCapture starts recording the stream's work; PrepareCapture and a warm-up run
// come first. The calling goroutine stays locked to its OS thread until EndCapture,
// which must be called from the same goroutine: HIP and CUDA end a global-mode capture
// only on the thread that began it. Capture does all of this in one call.
func (s Stream) BeginCapture() error {
	runtime.LockOSThread()
	err := s.do(func() error { return s.d.srv.BeginCapture(s.id) })
	if err != nil {
		runtime.UnlockOSThread()
	}
	return err
}

// EndCapture ends the recording and instantiates the graph, and lets go of the OS
// thread BeginCapture locked.
func (s Stream) EndCapture() (*Graph, error) {
	defer runtime.UnlockOSThread()
	var gid GraphID
	err := s.do(func() error {
		var err error
		gid, err = s.d.srv.EndCapture(s.id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Graph{d: s.d, id: gid, stream: s.id}, nil
}

// Replay enqueues the graph's work on the stream it was captured on and returns without
// waiting. A replay the driver refuses is returned, and also carried by the buffers the
// graph writes until a later replay succeeds.
func (g *Graph) Replay() error {
	if g == nil {
		return fmt.Errorf("replay: %w: nil graph", ErrInvalidArgument)
	}
	d := g.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if g.gone {
		return fmt.Errorf("replay: %w: graph %d was destroyed", ErrReleased, g.id)
	}
	if d.trace == nil {
		return d.srv.Replay(g.id, g.stream)
	}
	start, ok := d.traceBegin(g.stream)
	err := d.srv.Replay(g.id, g.stream)
	if ok {
		d.traceEnd(g.stream, "replay", fmt.Sprintf("replay graph %d", g.id), start)
	}
	return err
}

// Destroy waits for the graph's stream (a replay may still run) outside the device's
// lock, then destroys the graph and releases the buffers it kept. A failure of that
// wait is carried by the buffers the graph writes. A second Destroy is ErrReleased.
func (g *Graph) Destroy() error {
	if g == nil {
		return fmt.Errorf("destroy: %w: nil graph", ErrInvalidArgument)
	}
	d := g.d
	if err := d.enter(); err != nil {
		return err
	}
	if g.gone {
		d.leave()
		return fmt.Errorf("destroy: %w: graph %d was destroyed", ErrReleased, g.id)
	}
	g.gone = true
	f := d.srv.Sync(nil, g.stream)
	d.unlockToWait()
	_ = f.Wait() // the server's own wait below reports it where it belongs
	defer d.exit()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed { // else Close destroyed it
		d.srv.GraphDestroy(g.id, g.stream)
	}
	return nil
}

// do runs f on the server inside one call.
func (s Stream) do(f func() error) error {
	if err := s.d.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	return f()
}
