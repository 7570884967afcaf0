package compute

import (
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// streamState is everything the server infers about one device stream that the driver
// does not report: whether the stream is idle (the calls queued on it, and the point at
// which a wait last saw it drained), which of its calls carries a completion flag
// (flags.go), which writes on it no wait has confirmed yet (confirm.go), and whether
// anything outside the server may queue on it. It is one object per device stream, not
// per logical stream id: ids that share a device stream (Options.MaxStreams below the
// ids in use) share its work, so a fault that a wait of one id reports belongs to the
// writes of every id on that stream. The queue watch (queuewatch.go) creates it on the
// first call that names the stream, and every path resolves it once per call through
// queueWatch.state.
//
// Invariants (each fast path that reads this state relies on them; a path that cannot
// show them takes the driver's wait instead):
//
//  1. begun counts every call the server made that may queue work on the stream, before
//     the call reaches the platform; ended counts it after. A call in flight (begun !=
//     ended) makes the stream unknown: the platform may queue its work after any look.
//  2. idleAt is 1 + begun as of a snapshot taken before a wait or query that succeeded
//     with nothing in flight. The stream is known idle only while begun has not moved
//     since (knownIdle): a later call can only have queued more.
//  3. A shared stream (shared set) is never known idle and never waited for on a flag:
//     work queued on it from outside the server is invisible to begun, so only the
//     driver's own wait or query sees it. Once set, shared stays set for the life of
//     the stream: a native handle handed out may be kept and used at any later time.
//  4. writes holds the stream's writes no wait has confirmed; it is guarded by
//     confirmations.mu, the one lock every confirmation and failure takes, so that a
//     failed wait and a confirming one never split a write between them.
//  5. A failure belongs to every stream ordered after the failed work: waitedOn lists
//     the streams this one waited for on the device since its last successful wait,
//     and a failed wait of any of them leaves this stream's unconfirmed writes queued
//     after that ordering carrying the failure too (their work may have read what the
//     failed work never wrote), whether or not the device passes the failure on. A
//     write queued before the ordering ran ahead of it on the device and read nothing
//     of the other stream's work, and an ordering only on work a successful wait
//     confirmed read nothing that failed: neither takes the failure (confirm.go,
//     takeOrderedLocked).
type streamState struct {
	begun, ended atomic.Uint64
	idleAt       atomic.Uint64
	shared       atomic.Bool
	recent       queueRecent // {its stream, itself}: what queueWatch.last points to
	flag         flagState   // flags.go

	writes unconfirmed // confirm.go; guarded by confirmations.mu
	// waitedOn holds the streams this one was ordered after (a device-side wait for
	// their work) since its last successful wait, each with the points of those waits:
	// work queued here after such a wait may have used what that work wrote, so a
	// failure there is a failure here too (confirm.go, failOrdered), for the writes
	// queued after the first of them. Guarded by confirmations.mu.
	waitedOn map[*streamState]ordering

	// lastKernel is the kernel launched last on the stream, which a failed wait names
	// as the work that most likely faulted; guarded by confirmations.mu.
	lastKernel *Kernel
}

// ordering is the points of a stream's unconfirmed device-side waits for another
// stream's work: first no later than the earliest such wait, last the latest. A write
// queued after first may have used the other stream's work; one queued before it ran
// ahead of every such wait (points are handed out in the order the owner queues work).
type ordering struct{ first, last uint64 }

// share records that something outside the server may queue work on the stream:
// from now on every wait on it is the driver's (invariant 3).
func (q *streamState) share() { q.shared.Store(true) }

func (q *streamState) end() { q.ended.Add(1) }

// stream is the device stream the state is of.
func (q *streamState) stream() hipsys.Stream { return q.recent.s }

// snapshot is what a wait or query may later certify as idle: the calls begun, if none
// was in flight (one in flight may queue after the driver looked), else 0.
func (q *streamState) snapshot() uint64 {
	begun := q.begun.Load()
	if q.ended.Load() != begun {
		return 0
	}
	return begun + 1
}

// sawIdle records that everything queued up to snap has completed.
func (q *streamState) sawIdle(snap uint64) {
	for {
		cur := q.idleAt.Load()
		if snap <= cur || q.idleAt.CompareAndSwap(cur, snap) {
			return
		}
	}
}

// knownIdle reports, without a driver call, that the stream completed everything queued
// on it: it was seen idle, nothing was queued since, and nothing outside the server may
// queue on it. False means unknown, not busy.
func (q *streamState) knownIdle() bool {
	if q.shared.Load() {
		return false
	}
	at := q.idleAt.Load()
	return at != 0 && q.snapshot() == at
}

// knownIdle is s's streamState.knownIdle.
func (w *queueWatch) knownIdle(s hipsys.Stream) bool { return w.state(s).knownIdle() }
