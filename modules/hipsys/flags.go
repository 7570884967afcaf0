package hipsys

// Completion flags are a platform's faster way to wait for a launch that its caller
// waits for next. They are optional (the nvidia platform has them); the server checks
// with type assertions and waits with StreamSynchronize otherwise.
//
// A launch issued on the caller's thread is followed, in the same call, by a write of a
// fresh value (the token) into a word of host memory on the launch's stream, and the
// wait spins on that word instead of asking the driver, which is faster than the
// driver's wait; the write costs the launch some of its caller's time, so only a launch
// that is likely to be waited for next should ask for one. The write has to follow the
// launch at once: queued by the wait instead, it was slower than the driver's wait
// (docs/benchmarks.md, "Completion flags").
//
// A token covers the work queued on its stream up to its write: a caller that queued
// anything on the stream after the flagged launch (or let another library do so) must
// wait with StreamSynchronize.

// A FlaggingQueue is a LaunchQueue whose launches can be flagged.
type FlaggingQueue interface {
	LaunchQueue

	// LaunchFlagged is Launch, and, when the launch is issued on the caller's thread (seq
	// 0) and the driver took it, the write of its stream's completion flag right after
	// it: token is the write's number for FlagWaiter.StreamWaitFlag, 0 when none was
	// queued (the launch went to the queue's thread, was refused, or its stream has no
	// flag or is being captured).
	LaunchFlagged(fn Function, grid, block Dim3, sharedMemBytes uint32, stream Stream, args *KernelArgs,
		refused []LaunchRefusal) (seq uint64, token uint32, _ []LaunchRefusal, err error)
}

// A FlaggingCopier is a Platform whose async device-to-host copies can be flagged, as a
// queue's launches are: a small read that waits for its copy at once is the other caller
// a flag serves (bench/waits.c: a 4-byte read into pinned memory and a spin on the flag
// 0.91 of the same copy and cuStreamSynchronize on an H200).
type FlaggingCopier interface {
	// MemcpyDtoHAsyncFlagged is MemcpyDtoHAsync, and, when the copy was queued, the write
	// of s's completion flag right after it: token is its number for StreamWaitFlag, 0
	// when none was queued (s has no flag or is being captured).
	MemcpyDtoHAsyncFlagged(dst HostPtr, src DevicePtr, size uint64, s Stream) (token uint32, err error)
}

// A FlagWaiter is a Platform that waits on its streams' completion flags.
type FlagWaiter interface {
	// StreamWaitFlag waits until s's completion flag reaches token, that is until the
	// flagged launch and everything queued on s before it are done. It spins for a
	// while the platform chooses; work that runs longer, or that faulted (a faulted
	// context writes nothing more), is then waited for with StreamSynchronize, whose
	// answer it returns: a fault is reported as StreamSynchronize reports it.
	StreamWaitFlag(s Stream, token uint32) error
}
