package stream

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/memory"
)

// CaptureState is where a stream stands in the capture window: None → Prepare (the
// warm-up run, graph_prepare) → Recording (begin_capture) → None (end_capture), with
// Abort back to None from anywhere.
type CaptureState uint8

const (
	CaptureNone CaptureState = iota
	CapturePrepare
	CaptureRecording
)

func (s CaptureState) String() string {
	switch s {
	case CapturePrepare:
		return "prepare"
	case CaptureRecording:
		return "recording"
	default:
		return "none"
	}
}

// CacheMode is how the metadata info cache behaves: bounded (Normal), or keeping and
// pinning everything for the graph being prepared or recorded (Capture).
type CacheMode uint8

const (
	CacheNormal CacheMode = iota
	CacheCapture
)

// Capture is one stream's capture state (CubeCL's StreamCapture): the state machine,
// the write set of every scope executed while recording, and a counted hold on every
// buffer the recorded work uses, all of which the graph (or a refused instantiate)
// takes. The holds are what keeps a replay from writing into memory its caller released
// and a new allocation took over: the graph keeps each buffer until it is destroyed.
//
// A rejected transition changes nothing. Capture belongs to its stream and is used only
// by the goroutine driving that stream.
type Capture struct {
	state   CaptureState
	written []Binding // uncounted copies: the holds in pins keep them alive
	seen    map[memory.ID]struct{}
	pins    []Binding // counted: a hold on every buffer the recorded work uses
	held    map[memory.ID]struct{}
	failed  error // the first failure of work while recording: the graph is refused
}

// State is the current state.
func (c *Capture) State() CaptureState { return c.state }

// IsRecording reports whether the stream is recording: work queued on it is recorded
// into the graph rather than run, and anything that waits on the host for it (a fence,
// a drop-queue flush, a pinned allocation, a hipFree) would invalidate the capture.
func (c *Capture) IsRecording() bool { return c.state == CaptureRecording }

// CacheMode is Capture during Prepare and Recording: the warm-up run must leave in the
// info cache every buffer the recorded run will look up, since a miss while recording
// would allocate inside the graph.
func (c *Capture) CacheMode() CacheMode {
	if c.state == CaptureNone {
		return CacheNormal
	}
	return CacheCapture
}

// Prepare moves None → Prepare. It fails, changing nothing, if a capture is already
// prepared or recording.
func (c *Capture) Prepare() error {
	switch c.state {
	case CapturePrepare:
		return &StateError{Call: "graph_prepare", Reason: "a graph capture is already prepared on this stream"}
	case CaptureRecording:
		return &StateError{Call: "graph_prepare", Reason: "a graph capture is already recording on this stream"}
	}
	c.state = CapturePrepare
	return nil
}

// Begin moves Prepare → Recording. The caller does the driver work after it, and must
// Abort if that fails, so that a failed begin cannot leave the stream "recording"
// nothing.
func (c *Capture) Begin() error {
	switch c.state {
	case CaptureNone:
		return &StateError{Call: "begin_capture", Reason: "call graph_prepare before starting a capture"}
	case CaptureRecording:
		return &StateError{Call: "begin_capture", Reason: "a graph capture is already recording on this stream"}
	}
	c.state = CaptureRecording
	c.resetWritten()
	return nil
}

// End moves Recording → None before the caller seals the graph, so that a failed seal
// cannot wedge the stream in the recording state.
func (c *Capture) End() error {
	if c.state != CaptureRecording {
		return &StateError{Call: "end_capture", Reason: "no graph capture is recording on this stream"}
	}
	c.state = CaptureNone
	return nil
}

// Abort returns to None from any state and forgets the write set; the stream can be
// prepared again. Pins taken while recording are returned to the caller to release
// (once the device is done with them).
func (c *Capture) Abort() []Binding {
	c.state = CaptureNone
	c.resetWritten()
	pins := c.pins
	c.pins = nil
	clear(c.held)
	c.failed = nil
	return pins
}

// Record adds written to the write set when recording; otherwise it does nothing. A
// buffer is recorded once however many recorded launches write it.
func (c *Capture) Record(written []Binding) {
	if c.state != CaptureRecording {
		return
	}
	if c.seen == nil {
		c.seen = make(map[memory.ID]struct{})
	}
	for i := range written {
		id := written[i].ID()
		if _, dup := c.seen[id]; dup || id == 0 {
			continue
		}
		c.seen[id] = struct{}{}
		c.written = append(c.written, written[i])
	}
}

// Take hands over the write set and the pins recorded so far, and clears both: the
// graph (or the refusal) owns them from now on.
func (c *Capture) Take() (written, pins []Binding) {
	written, pins = c.written, c.pins
	c.written, c.pins = nil, nil
	clear(c.seen)
	clear(c.held)
	return written, pins
}

// fail records err, the failure of work while recording: that work is missing from the
// graph (or ran on bytes nothing wrote), so a replay would redo everything else and
// leave its outputs looking written. Only the first failure is kept.
func (c *Capture) fail(err error) {
	if c.state == CaptureRecording && c.failed == nil {
		c.failed = err
	}
}

// takeFailure hands over the recorded failure and clears it.
func (c *Capture) takeFailure() error {
	err := c.failed
	c.failed = nil
	return err
}

func (c *Capture) resetWritten() {
	c.written = nil
	clear(c.seen)
}

// hold keeps a counted reference to b, once per buffer, until the graph is destroyed
// (or the capture refused or aborted): the recorded work reads or writes it at every
// replay.
func (c *Capture) hold(b Binding) {
	id := b.ID()
	if _, dup := c.held[id]; dup || id == 0 {
		return
	}
	if c.held == nil {
		c.held = make(map[memory.ID]struct{})
	}
	// An invalid binding holds nothing; the command's resource lookup reports it.
	if pin, err := b.Clone(); err == nil {
		c.held[id] = struct{}{}
		c.pins = append(c.pins, pin)
	}
}

// pin keeps a counted cross-stream pin until the capture ends: while recording, the
// consuming work runs only when the graph replays, so no event marks its end.
func (c *Capture) pin(pins []Binding) { c.pins = append(c.pins, pins...) }

// refuseAlloc is the refusal of an allocation of size bytes of kind memory while c
// records (nil otherwise, and for a storage with no stream): the pools' growth belongs
// in the prepare run. The capture fails with it, so its graph is refused: a graph whose
// recorded work needed memory the pools did not have when the window opened would not
// find it at every replay.
func (c *Capture) refuseAlloc(kind string, size uint64) error {
	if c == nil || c.state != CaptureRecording {
		return nil
	}
	err := &StateError{Call: "alloc", Reason: fmt.Sprintf("a %s allocation of %d bytes inside a recording capture: "+
		"grow the pools in the prepare run (the warm-up) instead", kind, size)}
	c.fail(err)
	return err
}
