package stream

import (
	"errors"
	"fmt"
)

// Sentinels for errors.Is. Every error this package returns for a refused state change
// or an unsettled buffer wraps one of them; failures of HIP calls are *hipsys.Error,
// wrapped with the step that made the call.
var (
	// ErrGraphState marks a capture call made in the wrong capture state (the seed's
	// graph_state): the message starts with the refused call's name.
	ErrGraphState = errors.New("graph state")
	// ErrUnsettled is what a buffer carries while a write scope claims it and has not
	// settled: the work that would write it panicked, or is still being enqueued.
	ErrUnsettled = errors.New("stream: the write that claimed this buffer never settled")
	// ErrRecorded is what a buffer carries while work recorded into a graph writes it:
	// that work runs only when the graph is replayed. Work recorded later in the same
	// capture may read it; anything else is refused with it.
	ErrRecorded = errors.New("stream: written by work recorded into a graph, which runs only when the graph is replayed")
	// ErrClosed is returned by a MultiStream after Close.
	ErrClosed = errors.New("stream: multistream closed")
)

// StateError is a refused capture transition. Call is the server call refused
// ("graph_prepare", "begin_capture", "end_capture", ...) and Reason says why, in the
// seed's words; Error() is "<call>: <reason>".
type StateError struct {
	Call   string
	Reason string
}

func (e *StateError) Error() string { return e.Call + ": " + e.Reason }

// Is makes every StateError match ErrGraphState.
func (e *StateError) Is(target error) bool { return target == ErrGraphState }

// stepError wraps a HIP failure with the step that made the call, so a failure read back
// from a tainted buffer says what the failed work was doing.
func stepError(step string, err error) error {
	return fmt.Errorf("stream: %s: %w", step, err)
}

// recordedClaim is the claim on a buffer that recorded work writes: ErrRecorded, naming
// the stream whose capture records it. prior is the failure the buffer carried when the
// recording claimed it (nil for none), which the end of the capture puts back: the
// recorded work has not run, so the buffer still holds what that failure left.
type recordedClaim struct {
	slot  int
	prior error
}

func (e *recordedClaim) Error() string {
	return fmt.Sprintf("%v (capture on stream %d)", ErrRecorded, e.slot)
}

func (e *recordedClaim) Is(target error) bool { return target == ErrRecorded }
