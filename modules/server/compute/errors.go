package compute

import (
	"errors"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Sentinels for errors.Is. Failures of HIP calls are *hipsys.Error, wrapped with the
// server step that made the call; failures of the stream layer wrap its own sentinels
// (stream.ErrGraphState, stream.ErrUnsettled, stream.ErrUnknownGraph).
var (
	// ErrUnsupportedStrides is a copy descriptor the server cannot copy (CubeCL's
	// IoError::UnsupportedStrides), or a malformed one.
	ErrUnsupportedStrides = errors.New("server: unsupported strides")
	// ErrOutOfBounds is a copy past the end of its buffer.
	ErrOutOfBounds = errors.New("server: copy exceeds the target buffer")
	// ErrInvalidArgument is a call the server refuses before doing anything: a nil
	// kernel, buffers that do not match the kernel's declared IO, a bad size.
	ErrInvalidArgument = errors.New("server: invalid argument")
	// ErrCompilation is a kernel that failed to compile; the error is a *CompileError.
	ErrCompilation = errors.New("server: kernel compilation failed")
	// ErrDynamicCount is a dynamic cube count buffer that does not hold three u32.
	ErrDynamicCount = errors.New("server: dynamic cube count")
	// ErrProfileNotRegistered is a profiling token the profiler does not know.
	ErrProfileNotRegistered = errors.New("server: profile not registered")
	// ErrProfileInvalidated is a profiling window a failure happened inside.
	ErrProfileInvalidated = errors.New("server: profile invalidated by a failure inside its window")
	// ErrNoPinnedMemory is a copy that needed pinned staging and got none.
	ErrNoPinnedMemory = errors.New("server: unable to reserve pinned memory")
	// ErrCaptureClosed is what a buffer written by a capture still open when the server
	// closed carries: the recorded work never ran.
	ErrCaptureClosed = errors.New("server: the device closed while a capture was open; the recorded work never ran")
)

// deviceFault is the fault a failed stream-wide wait reported, kept so that a later call
// the faulted device also fails (a GPU refuses every call once a kernel faulted) names
// the work that faulted, not the step of its own that the driver refused: a read that
// could not reserve pinned memory on a faulted device failed because of the fault.
type deviceFault struct {
	err    error
	status hipsys.Status
}

// faultExplained is a call's failure on a device that faulted earlier: the fault first,
// then the call's own failure. errors.Is finds either.
type faultExplained struct {
	fault, call error
}

func (e *faultExplained) Error() string {
	return e.fault.Error() + " (the device has refused every call since; this call: " + e.call.Error() + ")"
}

func (e *faultExplained) Unwrap() []error { return []error{e.fault, e.call} }

// noteFault records err, a stream-wide wait's failure, as the device's fault unless one
// is recorded already (the first is the cause of those after it).
func (s *Server) noteFault(err error) {
	st := hipsys.StatusOf(err)
	if st == hipsys.Success || st == hipsys.ErrorUnknown {
		return
	}
	s.fault.CompareAndSwap(nil, &deviceFault{err: err, status: st})
}

// explain is err, or, when err carries the status of the fault a wait reported earlier
// and no wait has succeeded since, err behind that fault (faultExplained).
func (s *Server) explain(err error) error {
	f := s.fault.Load()
	if err == nil || f == nil || hipsys.StatusOf(err) != f.status {
		return err
	}
	return &faultExplained{fault: f.err, call: err}
}
