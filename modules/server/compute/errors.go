package compute

import "errors"

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
