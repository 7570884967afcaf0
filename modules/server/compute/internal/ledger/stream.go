package ledger

import (
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// Stream is everything the server infers about one device stream that the driver does
// not report. Each field names what guards it; the counters are atomics because the
// futures that wait outside the owner's lock read and certify them.
//
// Invariants (each fast path that reads this state relies on them; a path that cannot
// show them takes the driver's wait instead):
//
//  1. begun counts every call the server made that may queue work on the stream, before
//     the call reaches the platform; ended counts it after. A call in flight (begun !=
//     ended) makes the stream unknown: the platform may queue its work after any look.
//  2. idleAt is 1 + begun as of a snapshot taken before a wait or query that succeeded
//     with nothing in flight. The stream is known idle only while begun has not moved
//     since (KnownIdle): a later call can only have queued more.
//  3. A shared stream (shared set) is never known idle and never waited for on a flag:
//     work queued on it from outside the server is invisible to begun, so only the
//     driver's own wait or query sees it. Once set, shared stays set for the life of
//     the stream: a native handle handed out may be kept and used at any later time.
//  4. writes holds the stream's writes no wait has confirmed; it is guarded by
//     Ledger.mu, the one lock every confirmation and failure takes, so that a failed
//     wait and a confirming one never split a write between them.
//  5. A failure belongs to every stream ordered after the failed work: waitedOn lists
//     the streams this one waited for on the device since its last successful wait,
//     and a failed wait of any of them leaves this stream's unconfirmed writes queued
//     after that ordering carrying the failure too (their work may have read what the
//     failed work never wrote), whether or not the device passes the failure on. A
//     write queued before the ordering ran ahead of it on the device and read nothing
//     of the other stream's work, and an ordering only on work a successful wait
//     confirmed read nothing that failed: neither takes the failure (confirm.go,
//     takeOrderedLocked).
//  6. A stream-wide wait through the ledger (WaitGuarded) never reaches the driver
//     while its stream records a capture begun through it (BeginCapture): guard.mu is
//     held for reading by the one and for writing by the other (guard.go).
type Stream struct {
	// begun, ended: invariant 1 (atomic). idleAt: invariant 2 (atomic); never (0)
	// until a wait certified the stream.
	begun, ended atomic.Uint64
	idleAt       atomic.Uint64
	// shared: invariant 3 (atomic, set once).
	shared atomic.Bool
	// recent is {its device stream, itself}: what Ledger.last points to; immutable.
	recent recent
	// id is the logical id the stream layer created the device stream for (atomic, set
	// by Open); 0 for a stream the layer never reported, as before it reports one.
	id atomic.Uint64

	// flag is the flagged launch (its own mutex) and the guess of which launch a wait
	// follows (atomics, heuristic only): flags.go.
	flag flagState
	// guard is the capture guard (its own RWMutex): guard.go.
	guard captureGuard

	// writes: invariant 4; guarded by Ledger.mu.
	writes unconfirmed
	// waitedOn holds the streams this one was ordered after (a device-side wait for
	// their work) since its last successful wait, each with the points of those waits:
	// work queued here after such a wait may have used what that work wrote, so a
	// failure there is a failure here too (invariant 5), for the writes queued after
	// the first of them. Guarded by Ledger.mu.
	waitedOn map[*Stream]ordering
	// lastKernel is the entry name of the kernel launched last on the stream, which a
	// failed wait names as the work that most likely faulted; nil for none. Guarded by
	// Ledger.mu.
	lastKernel *string
}

// never is idleAt before any wait certified the stream, and the snapshot of a stream
// with a call in flight: a snapshot of never certifies nothing (invariants 1 and 2).
const never = 0

// ordering is the points of a stream's unconfirmed device-side waits for another
// stream's work: first no later than the earliest such wait, last the latest. A write
// queued after first may have used the other stream's work; one queued before it ran
// ahead of every such wait (points are handed out in the order the owner queues work).
type ordering struct{ first, last uint64 }

// Sys is the device stream the state is of.
func (q *Stream) Sys() hipsys.Stream { return q.recent.sys }

// ID is the logical id the device stream was created for (Open), 0 if none was
// reported: the id its failures are reported under.
func (q *Stream) ID() stream.ID { return stream.ID(q.id.Load()) }

// Begin counts a call that may queue work on the stream, before it reaches the
// platform, and returns the count with it; End counts it done. A call that panics
// between them leaves the stream never again known idle: slower reads, never a wrong
// one.
func (q *Stream) Begin() uint64 { return q.begun.Add(1) }

// End: see Begin.
func (q *Stream) End() { q.ended.Add(1) }

// Share records that something outside the server may queue work on the stream: from
// now on every wait on it is the driver's (invariant 3).
func (q *Stream) Share() { q.shared.Store(true) }

// Shared reports whether Share was called.
func (q *Stream) Shared() bool { return q.shared.Load() }

// snapshot is what a wait or query may later certify as idle: the calls begun, if none
// was in flight (one in flight may queue after the driver looked), else never.
func (q *Stream) snapshot() uint64 {
	begun := q.begun.Load()
	if q.ended.Load() != begun {
		return never
	}
	return begun + 1
}

// SawIdle records that everything queued up to snap (FlagWait's, or a snapshot taken
// before a wait) has completed.
func (q *Stream) SawIdle(snap uint64) {
	for {
		cur := q.idleAt.Load()
		if snap <= cur || q.idleAt.CompareAndSwap(cur, snap) {
			return
		}
	}
}

// Certify runs wait (a query or a sync of the stream) and, on success, records the
// stream idle as of the snapshot taken before it.
func (q *Stream) Certify(wait func(hipsys.Stream) error) error {
	snap := q.snapshot()
	err := wait(q.Sys())
	if err == nil {
		q.SawIdle(snap)
	}
	return err
}

// KnownIdle reports, without a driver call, that the stream completed everything
// queued on it: it was seen idle, nothing was queued since, and nothing outside the
// server may queue on it. False means unknown, not busy.
func (q *Stream) KnownIdle() bool {
	if q.shared.Load() {
		return false
	}
	at := q.idleAt.Load()
	return at != never && q.snapshot() == at
}

// Counts are the calls begun and ended on the stream (invariant 1), for tests and
// diagnostics: equal counts say nothing is in flight at the moment of the look.
func (q *Stream) Counts() (begun, ended uint64) { return q.begun.Load(), q.ended.Load() }
