package server_test

import "testing"

// Regressions of TestModel: each is a counterexample (shrunk by hand or by delta
// debugging over TestModelOps) replayed through the same model and oracle, so the rule
// it broke is checked the same way. A race-dependent one is replayed several times.

// modelRegress replays ops reps times, each on a fresh Device.
func modelRegress(t *testing.T, o modelOpts, reps int, ops []modelOp) {
	t.Helper()
	for range reps {
		runModelOps(t, o, ops)
	}
}

// A successful WriteAt of part of a buffer that carries a failure (here a launch the
// driver refused) must not release the failure: the rest of the buffer still holds the
// bytes the failed launch left unwritten (compute/write.go, keepFailure).
func TestModelRegress_PartialWriteReleasesAFailure(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 1, []modelOp{
		{Kind: "alloc", S: 0, Size: 1024, Seed: 1},
		{Kind: "alloc", S: 0, Size: 1024, Seed: 2},
		{Kind: "launch", S: 0, B: 1, X: 0, Seed: 5, Fail: "hipModuleLaunchKernel", FailN: 1},
		{Kind: "writeAt", S: 0, B: 1, Off: 0, Len: 4, Seed: 3},
		{Kind: "read", S: 0, B: 1},
	})
}

// The same through a device fault: the trap's output carries the fault once a Sync
// reported it; a WriteAt of its first word must not make the rest readable.
func TestModelRegress_PartialWriteAfterDeviceFault(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 1}, 1, []modelOp{
		{Kind: "alloc", S: 0, Size: 1024, Seed: 1},
		{Kind: "launch", S: 0, B: 0, K: kTrap},
		{Kind: "sync", S: 0},
		{Kind: "writeAt", S: 0, B: 0, Off: 0, Len: 4, Seed: 3},
		{Kind: "read", S: 0, B: 0},
	})
}

// A trap (a kernel that faults on the device, writing nothing) on device stream 1; its
// output read from device stream 0 before anything waited on stream 1: the read must
// not return the output's old bytes with a nil error. The cpu device reports a fault
// only at a wait on its own stream, and nothing on stream 0 waits there: a cross-stream
// wait passes the failure on (the cpu platform, as a GPU stops every stream), and a
// failed wait fails the streams ordered after the failed one (compute/confirm.go).
func TestModelRegress_FaultedOutputReadFromAnotherStream(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 1, []modelOp{
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "launch", S: 1, B: 0, K: kTrap},
		{Kind: "read", S: 0, B: 0},
	})
}

// The same, one step removed: a launch on the faulted stream computes from the trap's
// output, and that launch's output is read from the other stream.
func TestModelRegress_OutputComputedAfterAFaultReadFromAnotherStream(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 1, []modelOp{
		{Kind: "alloc", S: 0, Size: 4, Seed: 1},
		{Kind: "alloc", S: 0, Size: 4, Seed: 2},
		{Kind: "sync", S: 0},
		{Kind: "launch", S: 0, B: 0, K: kTrap},
		{Kind: "launch", S: 2, B: 1, X: 0, Seed: 1000},
		{Kind: "read", S: 1, B: 1},
	})
}

// Known bug (1): MaxStreams 1, a launch under id 1 faults on the device and a Sync of id
// 0 reports it: the faulted launch's output must carry the failure, never read its old
// bytes.
func TestModelRegress_FaultReportedByAnotherID(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 1}, 1, []modelOp{
		{Kind: "alloc", S: 1, Size: 4, Seed: 1},
		{Kind: "sync", S: 1},
		{Kind: "launch", S: 1, B: 0, K: kTrap},
		{Kind: "sync", S: 0},
		{Kind: "read", S: 1, B: 0},
	})
}

// Known bug (2): outside work ordered onto the Device's native stream (another library's
// stream writes the buffer after a long memset, records an event, the native stream
// waits for it) while the Device believes its stream idle: the small read right after
// must see the outside write.
func TestModelRegress_SmallReadAfterOutsideOrdering(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 3, []modelOp{
		{Kind: "alloc", S: 0, Size: 1024, Seed: 1},
		{Kind: "outside", S: 0, B: 0, Len: 1024, Seed: 0x3f, Flag: true},
	})
}

// Known bug (3): a graph captured on stream 0 reads x; x is rewritten on a busy stream 1
// (a spin first); a replay on stream 0 right after must compute from the new x.
func TestModelRegress_ReplayWaitsForItsInputOnABusyStream(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 3, []modelOp{
		{Kind: "alloc", S: 0, Size: 1024, Seed: 1},
		{Kind: "alloc", S: 0, Size: 1024, Seed: 2},
		{Kind: "capture", S: 0, B: 1, X: 0, Seed: 5},
		{Kind: "sync", S: 0},
		{Kind: "spin", S: 1},
		{Kind: "spin", S: 1},
		{Kind: "launch", S: 1, B: 0, K: kSetC, Seed: 11},
		{Kind: "replay", G: 0},
		{Kind: "read", S: 0, B: 1},
	})
}

// Known bug (4): an injected failure of hipEventSynchronize during a large (multi-chunk)
// write on stream 1 must not fail a buffer written earlier on stream 0 and confirmed
// by a Sync there.
func TestModelRegress_EventSyncFailureOnAnotherStream(t *testing.T) {
	for n := 1; n <= 4; n++ {
		modelRegress(t, modelOpts{MaxStreams: 2}, 1, []modelOp{
			{Kind: "alloc", S: 0, Size: 1024, Seed: 1},
			{Kind: "alloc", S: 1, Size: 96<<10 + 4, Seed: 2},
			{Kind: "sync", S: 1},
			{Kind: "write", S: 0, B: 0, Seed: 3},
			{Kind: "sync", S: 0},
			{Kind: "write", S: 1, B: 1, Seed: 4, Fail: "hipEventSynchronize", FailN: n},
			{Kind: "read", S: 0, B: 0},
			{Kind: "read", S: 1, B: 0},
		})
	}
}

// A trap in a capture's warm-up (its fault pending on stream 0), then a launch on stream
// 1 from an input the fault leaves carrying a failure, which is therefore refused and
// leaves its output's old bytes, then a launch that writes only the output's first word
// from a clean input: the server takes a launch to write its whole output, so the
// output reads its first word new and the rest as it was, which something did write. A
// regression of the model's own oracle (it once expected the refused launch's bytes).
func TestModelRegress_RefusedLaunchThenPartialLaunch(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, BigStaging: true}, 2, []modelOp{
		{Kind: "alloc", S: 1, Size: 1024},
		{Kind: "alloc", S: 0, Size: 1024},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "capture", S: 0, B: 5, X: 5, Seed: 42, K: kTrap},
		{Kind: "capture", S: 0, B: 1, X: 3, Seed: 944, K: kSetC},
		{Kind: "alloc", S: 3, Size: 1024, Seed: 3},
		{Kind: "readAt", S: 2, B: 2, Off: 12, Len: 125319},
		{Kind: "launch", S: 1, X: 1, Seed: 1},
		{Kind: "launch", S: 3, X: 4, Seed: 7},
		{Kind: "read", S: 0},
	})
}

// A capture whose warm-up launch the driver refuses (the launch queue reports it when
// it settles): the output carries the refusal, and the recording's claim on it must not
// erase it when the capture ends (stream.Failures.setRecorded keeps it): the recorded
// work never ran, and the warm-up wrote nothing.
func TestModelRegress_CaptureClaimKeepsAFailure(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 1, BigStaging: true}, 1, []modelOp{
		{Kind: "alloc", S: 1, Size: 1024, Seed: 1},
		{Kind: "alloc", S: 3, Size: 65536, Seed: 1},
		{Kind: "capture", S: 0, B: 1, X: 1, Seed: 58, K: kTrap, Fail: "hipModuleLaunchKernel", FailN: 1},
		{Kind: "read", S: 1, B: 1},
	})
}

// A trap on stream 1; a write on stream 0 of a buffer homed on stream 1 orders stream 0
// after the trap (the cpu device passes the failure on to stream 0); a read on stream 0
// reports it. The trap's output, never waited for on its own stream, must still read as
// failed from stream 0: a failed wait asks the streams it was ordered after with their
// own waits (compute/confirm.go, failWaitFrom). Timing-dependent, so replayed a few
// times.
func TestModelRegress_FaultFoundThroughAnOrderedStream(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, BigStaging: true}, 5, []modelOp{
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "launch", S: 1, B: 2, X: 1, Seed: 14, K: kTrap},
		{Kind: "writeAt", S: 2, B: 1, Len: 4, Seed: 31},
		{Kind: "read", S: 0},
		{Kind: "read", S: 1, B: 1},
		{Kind: "read", S: 2, B: 2},
	})
}

// A trap on stream 1 into a buffer last written on stream 0 (stream 1 is ordered after
// stream 0), then a launch on stream 0 that computes from the trap's output (stream 0
// is ordered after stream 1: each stream waited for the other's work). A staging wait
// for stream 1 reports the fault; failWaitFrom acknowledges it and asks stream 0, the
// stream 1 waited for, with its own wait. When stream 0's cross-stream wait ran only
// after the acknowledgement, the cpu device passes nothing on and that wait succeeds:
// the output computed from the unwritten bytes must still carry the failure
// (compute/confirm.go fails the streams ordered after stream 1 before asking).
// Timing-dependent (about three runs in four failed before the fix), so replayed
// several times.
func TestModelRegress_OutputOrderedAfterAFaultInBothDirections(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 8, []modelOp{
		{Kind: "alloc", S: 1, Size: 1024},
		{Kind: "alloc", S: 1, Size: 65536},
		{Kind: "alloc", S: 2, Size: 65536},
		{Kind: "launch", S: 1, B: 2, K: kTrap},
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "launch", S: 2, B: 1, X: 2},
		{Kind: "write", S: 1, B: 0},
		{Kind: "alloc", S: 2, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "read", S: 3, B: 1},
	})
}

// A regression of the model's own oracle: a trap on stream 1 after stream 0 was ordered
// after stream 1's work (a write on stream 0 of a buffer last written on stream 1), then
// a read of the trap's output on stream 1, whose staging wait reports the fault and
// acknowledges it: the server fails the writes of stream 0, ordered after stream 1, as
// a failed Sync does (compute/confirm.go, failOrdered), so the Sync after it succeeds
// and a read of stream 0's write returns the failure. The model once failed the other
// streams only when the read buffer carried no failure of its own, and took that error
// for a spurious one.
func TestModelRegress_FaultReportedByAReadFailsOrderedStreams(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, BigStaging: true}, 1, []modelOp{
		{Kind: "alloc", S: 3, Size: 1024},
		{Kind: "alloc", S: 3, Size: 1024},
		{Kind: "writeAt", S: 0, Len: 1},
		{Kind: "alloc", S: 2, Size: 1024},
		{Kind: "launch", S: 1, B: 1, X: 3, K: kTrap},
		{Kind: "readAt", S: 3, B: 1, Flag: true},
		{Kind: "sync", S: 1},
		{Kind: "read", S: 1, B: 2},
	})
}

// A launch on stream 1 of a buffer last written on stream 0 whose cross-stream wait
// (hipStreamWaitEvent) the driver refuses: the launch never runs, Launch returns nil,
// and the output carries the failure over its old bytes. A launch on stream 1 that
// writes only the output's first word then releases the failure (the server takes a
// launch to write its whole output): the rest reads as the allocation's write left it,
// which something did write. A regression of the model's own oracle, which expected
// the refused launch's bytes (shrunk from 50 ops).
func TestModelRegress_RefusedWaitThenPartialLaunch(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, BigStaging: true}, 2, []modelOp{
		{Kind: "alloc", S: 1, Size: 4, Seed: 1},
		{Kind: "alloc", S: 0, Size: 1024, Seed: 2},
		{Kind: "launch", S: 1, B: 1, K: kSetC, Seed: 7, Fail: "hipStreamWaitEvent", FailN: 1},
		{Kind: "launch", S: 1, B: 1, X: 0, Seed: 5},
		{Kind: "read", S: 1, B: 1},
	})
}

// The same behind a long spin on stream 0 and a rewrite there: the refused launch
// must not mark its output as last written by stream 1, which never waited for stream
// 0's rewrite; else the next launch on stream 1 skips that wait, its output's first
// word races the rewrite, and the read on stream 1 returns the bytes from before it
// (stream.Scope.Execute marks after a failure only the outputs its stream was ordered
// after, stream/order.go orderedOutputs). Failed in every run before the fix.
func TestModelRegress_RefusedWaitKeepsTheLastWriter(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, BigStaging: true}, 2, []modelOp{
		{Kind: "alloc", S: 1, Size: 4, Seed: 1},
		{Kind: "alloc", S: 0, Size: 1024, Seed: 2},
		{Kind: "spin", S: 0, Seed: 100_000_000},
		{Kind: "launch", S: 0, B: 1, K: kSetC, Seed: 9},
		{Kind: "launch", S: 1, B: 1, K: kSetC, Seed: 7, Fail: "hipStreamWaitEvent", FailN: 1},
		{Kind: "launch", S: 1, B: 1, X: 0, Seed: 5},
		{Kind: "read", S: 1, B: 1},
	})
}

// A regression of the model's own oracle: stream 0 computes from a buffer stream 1
// wrote (stream 0 is ordered after stream 1's work, that write unconfirmed), then a
// trap on stream 1, then an allocation whose staging waits report the fault and
// acknowledge it inside a Write that returns nil, so the Sync of stream 1 after it
// succeeds. The failed wait blames stream 1's unconfirmed writes, the input among them
// (a failed wait does not say which of them failed), and so the output stream 0
// computed from it after waiting for it (compute/confirm.go, failOrdered): the read of
// that output returns the failure, which is right. The model once applied a failure to
// other streams only at a failed Sync or read, and took the error for a spurious one
// (the unresolved counterexample of the fail-closed promise, shrunk from 36 ops).
func TestModelRegress_FaultFoundInsideAWriteBlamesAnOrderedOutput(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 2, []modelOp{
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "launch", S: 0, B: 1, X: 0},
		{Kind: "launch", S: 1, B: 2, K: kTrap},
		{Kind: "alloc", S: 1, Size: 65536},
		{Kind: "sync", S: 1},
		{Kind: "read", S: 1, B: 1},
	})
}

// The same fault found the same way, blamed precisely: stream 0 writes b1 (a set, from
// no input) before it is ordered after stream 1 (a launch from a buffer stream 1
// wrote). b1's write ran ahead of that ordering on the device and read nothing of
// stream 1's work, so the fault must not take it: the read returns its bytes. Before
// the fix, a stream ordered after the failed one lost every unconfirmed write it had.
func TestModelRegress_WriteBeforeAnOrderingKeepsItsBytes(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 2, []modelOp{
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 0, Size: 4},
		{Kind: "alloc", S: 1, Size: 4},
		{Kind: "launch", S: 0, B: 1, K: kSetC, Seed: 9},
		{Kind: "launch", S: 0, B: 2, X: 0},
		{Kind: "launch", S: 1, B: 3, K: kTrap},
		{Kind: "alloc", S: 1, Size: 65536},
		{Kind: "sync", S: 1},
		{Kind: "read", S: 0, B: 1},
		{Kind: "read", S: 0, B: 2},
	})
}

// Stream 0 computes b1 from a buffer stream 1 wrote, then a Sync of stream 1 confirms
// everything stream 0 waited for there; only then does a trap on stream 1 fault. b1
// was computed from confirmed work, which did not fail: the fault must not take it
// (compute/internal/ledger/confirm.go, takeOrderedLocked: an ordering no later than the failed stream's
// last confirmed point passes nothing on). Before the fix, any ordering did.
func TestModelRegress_OrderingOnConfirmedWorkKeepsItsBytes(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2}, 2, []modelOp{
		{Kind: "alloc", S: 1, Size: 4, Seed: 1},
		{Kind: "alloc", S: 0, Size: 4, Seed: 2},
		{Kind: "alloc", S: 1, Size: 4, Seed: 3},
		{Kind: "launch", S: 0, B: 1, X: 0, Seed: 5},
		{Kind: "sync", S: 1},
		{Kind: "launch", S: 1, B: 2, K: kTrap},
		{Kind: "alloc", S: 1, Size: 65536},
		{Kind: "sync", S: 1},
		{Kind: "read", S: 0, B: 1},
	})
}

// A wrong-bytes result (found by TestModel with -rapid.checks=6000): a trap on stream 1
// into b0, then a read of b0 on stream 0, which waits on the device for stream 1's work
// and, stream 0 being idle, reads with one blocking copy. The read counts on the wait
// passing the fault on to stream 0 (nothing else of the read waits on stream 1). The cpu
// device dropped a wait whose event's record had already run, so when stream 1's
// worker ran the trap and the fence before the wait was issued, nothing was passed on,
// and the read returned b0's old bytes with a nil error (hipsys/cpu, submitOne: the
// wait is now queued and fails). Timing-dependent (each of five runs of these 300
// replays failed before the fix), so replayed many times.
func TestModelRegress_ReadAfterAFaultWhoseFenceHadRun(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, Direct: true}, 300, []modelOp{
		{Kind: "alloc", S: 1, Size: 65536, Seed: 3},
		{Kind: "alloc", S: 3, Size: 65536, Seed: 421},
		{Kind: "launch", S: 1, X: 1, Seed: 42, K: kTrap},
		{Kind: "alloc", S: 2, Size: 1024, Seed: 59817},
		{Kind: "read", S: 0},
	})
}

// The blame passed on through a stream in between, precisely: three device streams.
// Stream 0 computes b2 from b1 (stream 0 is ordered after stream 1's work), then stream
// 1 computes b3 from b0 (stream 1 is ordered after stream 2's), then a trap on stream 2
// is found inside an allocation there. Stream 1's writes after its ordering take the
// failure (b3 reads as failed); stream 0 waited only for stream 1's work from before
// that ordering, which read nothing of stream 2's, so b2 keeps its bytes. Before the
// fix, every stream ordered after a blamed one was blamed whole.
func TestModelRegress_OrderingBeforeTheBlameKeepsItsBytes(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 3}, 2, []modelOp{
		{Kind: "alloc", S: 2, Size: 4, Seed: 1},
		{Kind: "alloc", S: 1, Size: 4, Seed: 2},
		{Kind: "alloc", S: 0, Size: 4, Seed: 3},
		{Kind: "alloc", S: 1, Size: 4, Seed: 4},
		{Kind: "alloc", S: 2, Size: 4, Seed: 5},
		{Kind: "launch", S: 0, B: 2, X: 1, Seed: 7},
		{Kind: "launch", S: 1, B: 3, X: 0, Seed: 8},
		{Kind: "launch", S: 2, B: 4, K: kTrap},
		{Kind: "alloc", S: 2, Size: 65536},
		{Kind: "sync", S: 2},
		{Kind: "read", S: 0, B: 2},
		{Kind: "read", S: 1, B: 3},
	})
}

// A replay runs on the stream its graph was captured on, not on the id the op names.
// Here the graph (b1 from b2) replays on device stream 0 while b1's last write was on
// stream 1, after a trap there: the replay orders stream 0 after stream 1's failed
// work, which passes the fault on, and stream 0's Sync reports the trap. The model took
// the op's id (device stream 1) for the replay's stream and called that error a bug.
func TestModelRegress_ReplayInheritsTheFaultOfItsOwnStream(t *testing.T) {
	modelRegress(t, modelOpts{MaxStreams: 2, BigStaging: true}, 3, []modelOp{
		{Kind: "alloc", S: 0, Size: 4, Seed: 1},
		{Kind: "alloc", S: 0, Size: 4, Seed: 2},
		{Kind: "alloc", S: 0, Size: 4, Seed: 3},
		{Kind: "capture", S: 0, B: 1, X: 2, Seed: 7},
		{Kind: "alloc", S: 0, Size: 17<<20 + 4, Seed: 4},
		{Kind: "launch", S: 1, B: 0, K: kTrap},
		{Kind: "launch", S: 1, B: 1, K: kSetC, Seed: 9},
		{Kind: "writeAt", S: 1, B: 1, Off: 106632, Len: 116794, Seed: 5},
		{Kind: "replay", S: 3, G: 0},
		{Kind: "sync", S: 0},
	})
}
