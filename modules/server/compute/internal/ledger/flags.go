package ledger

import (
	"sync"
	"sync/atomic"
)

// Completion flags (hipsys.FlaggingQueue, hipsys.FlagWaiter; the nvidia platform has
// them). A caller that launches and then waits, the pattern of a synchronous loop, sees
// its launch done sooner when the launch is followed at once by a write the stream makes
// to host memory and the wait spins on it, than through the driver's stream wait. But
// the write costs the launch part of a microsecond of its caller's time, and covers only
// what was queued before it. So a launch is flagged only when the ledger guesses that a
// wait on the stream comes next with nothing queued between (ExpectWait), and a wait
// takes the flag only when nothing was queued on the stream after the flagged call
// (FlagWait). A small read's copy needs no guess: its wait follows at once.
//
// The guess: a stream's waits follow runs of launches; when the last run (the launches
// between its last two waits) queued nothing else, the launch that ends a run of the
// same length is flagged. A launch-and-sync loop has every launch flagged; a loop of
// launches with a sync every n has only its n-th flagged, if it is issued on the
// caller's thread (a queued launch is not: a loop's later launches go to the queue's
// thread); a launch followed by a read or a copy is never flagged, nor is a run whose
// length changes. A wrong guess costs the write, never a wrong answer: a wait checks
// what the flag covers.

// flagState is a stream's flagged call and the guess.
type flagState struct {
	// mu guards at and token together: a wait must take the token of the call at names.
	mu    sync.Mutex
	at    uint64 // the flagged call's begun count (Stream.begun after it began); noFlag: none
	token uint32 // its flag write's number

	// The guess; heuristic only, so plain atomics without a common lock.
	launches     atomic.Uint64 // launches begun through the queue
	waitBegun    atomic.Uint64 // begun at the last wait
	waitLaunches atomic.Uint64 // launches at the last wait
	run          atomic.Uint64 // launches between the last two waits, if they queued only those; else noRun
}

const (
	// noFlag is flagState.at with no flagged call recorded: a wait then takes the
	// driver's stream wait.
	noFlag = 0
	// noRun is flagState.run when the last run queued something besides launches, or
	// has not been seen: no launch is guessed to precede a wait.
	noRun = 0
)

// ExpectWait counts a launch through the queue, the n-th call begun on the stream
// (Begin's count), and guesses whether a wait comes next: true when the launch should
// be flagged. A shared stream is never flagged (invariant 3), but its launches are
// counted all the same.
func (q *Stream) ExpectWait(n uint64) bool {
	f := &q.flag
	pos := f.launches.Add(1) - f.waitLaunches.Load()
	run := f.run.Load()
	return run != noRun && pos == run && n-f.waitBegun.Load() == pos && !q.shared.Load()
}

// Flagged records the flag write (token, 0 for none) that followed call n.
func (q *Stream) Flagged(n uint64, token uint32) {
	if token == 0 {
		return
	}
	f := &q.flag
	f.mu.Lock()
	if n > f.at {
		f.at, f.token = n, token
	}
	f.mu.Unlock()
}

// FlagWait begins a stream-wide wait: it learns the run the wait ends, and consumes the
// flag record. onFlag is true, with the token to wait for, when the stream's last call
// was a flagged one and none is in flight, and the stream is not shared; otherwise the
// wait must be the driver's. snap is what a successful wait certifies (SawIdle). The
// snapshot is taken before the record is checked, so a call begun in between makes the
// wait the driver's, and what a success certifies idle is exactly what the flag covers.
func (q *Stream) FlagWait() (snap uint64, token uint32, onFlag bool) {
	snap = q.snapshot()
	q.flag.waited(q.begun.Load())
	token, ok := q.flag.take(snap)
	return snap, token, ok && !q.shared.Load()
}

// take gives the token of the flagged call that was the last call begun on the stream,
// when snap (snapshot) shows it was and none is in flight; the record is consumed either
// way.
func (f *flagState) take(snap uint64) (uint32, bool) {
	f.mu.Lock()
	at, token := f.at, f.token
	f.at = noFlag
	f.mu.Unlock()
	return token, at != noFlag && at+1 == snap
}

// waited learns the run that a wait ends: begun calls on the stream so far, of which
// launches through the queue. A wait with nothing queued since the last one keeps the
// guess (a second Sync of the same work).
func (f *flagState) waited(begun uint64) {
	launches := f.launches.Load()
	calls, ls := begun-f.waitBegun.Swap(begun), launches-f.waitLaunches.Swap(launches)
	switch {
	case calls == 0:
	case calls == ls:
		f.run.Store(ls)
	default:
		f.run.Store(noRun)
	}
}
