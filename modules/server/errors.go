package server

import (
	"errors"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// Errors for errors.Is. Each comes back wrapped with what was wrong ("launch saxpy:
// argument 3: launch: server: already released: Buffer(#7, 4096 B on cpu:0, stream 0)"),
// never as a panic. A failure of a HIP
// call is a *hipsys.Error naming the call and HIP's status, wrapped with the step that
// made it; errors.Is matches it against hipsys's statuses (hipsys.ErrorOutOfMemory, ...).
var (
	// ErrClosed is a call on a Device, or on a buffer, graph or profile it made, after
	// Device.Close.
	ErrClosed = errors.New("server: device is closed")
	// ErrReleased is a buffer, graph or profile used after it was released, destroyed
	// or stopped.
	ErrReleased = errors.New("server: already released")
	// ErrForeign is a buffer or graph of another Device.
	ErrForeign = errors.New("server: belongs to another device")
	// ErrInvalidArgument is a call refused before anything was done: a nil kernel,
	// buffer or function, buffers that do not match the kernel's declared access list,
	// a device index the platform does not have.
	ErrInvalidArgument = compute.ErrInvalidArgument
	// ErrOutOfBounds is a copy of more bytes than its buffer holds.
	ErrOutOfBounds = compute.ErrOutOfBounds
	// ErrCompilation is a kernel that failed to compile; the error is a *CompileError.
	ErrCompilation = compute.ErrCompilation
	// ErrProfileInvalidated is a profile inside which some work failed: its time
	// would measure work that did not run.
	ErrProfileInvalidated = compute.ErrProfileInvalidated
	// ErrNoPinnedMemory is a copy that needed pinned host memory and got none.
	ErrNoPinnedMemory = compute.ErrNoPinnedMemory
	// ErrCaptureState is a capture call out of order (BeginCapture without
	// PrepareCapture, a second PrepareCapture), or a call a recording stream refuses
	// (a profile, whose events would be recorded rather than stamped).
	ErrCaptureState = stream.ErrGraphState
	// ErrRecorded is a read, check or launch input of a buffer that work being recorded
	// into a graph writes: that work runs only when the graph is replayed, so the bytes
	// it would write are not there yet. After the capture ends, the buffer holds what
	// the capture's warm-up run wrote.
	ErrRecorded = stream.ErrRecorded
	// ErrTooBig is an allocation larger than the largest the device's pools can make:
	// what a driver reports as out of memory for a size no device has.
	ErrTooBig = memory.ErrBufferTooBig
)

// CompileError is a kernel that failed to compile: the compiler's log and the source.
// It matches ErrCompilation.
type CompileError = compute.CompileError
