package hipsys

// The calls that queue work on a stream, in one table. Whatever keeps count of a
// stream's work (the server's queue watch, which infers from its counts that a stream
// is idle) must see every one of them, and a test that checks a model of a stream's
// work against the platform must know them too: a call that queues work and is missing
// from a count makes a busy stream look idle, and a read then returns bytes the work
// had not yet written. So they are listed here once, and the tests of every counter
// check, by reflection over Platform and the optional interfaces, that each method
// taking a Stream is in exactly one of the two lists below.

// QueuingCalls are the methods, of Platform and of its optional interfaces
// (LaunchQueue, FlaggingQueue, FlaggingCopier), that may queue work on the stream they
// are given. A capture's beginning and end queue nothing, but change what the stream's
// later work means (recorded, not run), so they count as queuing.
var QueuingCalls = []string{
	"MemsetAsync",
	"MemcpyHtoDAsync",
	"MemcpyDtoHAsync",
	"MemcpyDtoDAsync",
	"Memcpy2DAsync",
	"MemcpyPeerAsync",
	"StreamWaitEvent",
	"EventRecord",
	"ModuleLaunchKernel",
	"ModuleLaunchCooperativeKernel",
	"StreamBeginCapture",
	"StreamEndCapture",
	"GraphUpload",
	"GraphLaunch",
	"Launch",                 // LaunchQueue
	"LaunchFlagged",          // FlaggingQueue
	"MemcpyDtoHAsyncFlagged", // FlaggingCopier
}

// NonQueuingStreamCalls are the methods that take a stream and queue nothing on it:
// they ask about it, wait for it, or end it.
var NonQueuingStreamCalls = []string{
	"StreamQuery",
	"StreamSynchronize",
	"StreamDestroy",
	"StreamIsCapturing",
	"StreamWaitFlag", // FlagWaiter
}

// IsQueuingCall reports whether the method named name queues work on its stream.
func IsQueuingCall(name string) bool {
	for _, n := range QueuingCalls {
		if n == name {
			return true
		}
	}
	return false
}
