package compute

import (
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Completion flags (hipsys.FlaggingQueue, hipsys.FlagWaiter; the nvidia platform has
// them). A caller that launches and then waits, the pattern of a synchronous loop, sees
// its launch done sooner when the launch is followed at once by a write the stream makes
// to host memory and the wait spins on it, than through the driver's stream wait. But the
// write costs the launch some of its caller's time (docs/benchmarks.md, "Completion
// flags"), and covers only what was queued before it. So the watch flags a launch only when it
// guesses that a wait on the stream comes next with nothing queued between, and waits
// on a flag only when nothing was queued on the stream after the flagged launch. A small
// read's copy (copySmall) needs no guess: its wait follows at once.
//
// The guess: a stream's waits follow runs of launches; when the last run (the launches
// between its last two waits) queued nothing else, the launch that ends a run of the
// same length is flagged. A launch-and-sync loop has every launch flagged; a loop of
// launches with a sync every n has only its n-th flagged, if it is issued on the
// caller's thread (a queued launch is not: a loop's later launches go to the queue's
// thread); a launch followed by a read or a copy is never flagged, nor is a run whose
// length changes. A wrong guess costs the write, never a wrong answer: a wait checks
// what the flag covers.

// flagState is a stream's flagged launch and the guess.
type flagState struct {
	mu    sync.Mutex
	at    uint64 // the flagged launch's begun count (streamState.begun after it began); 0: none
	token uint32 // its flag write's number

	// The guess; heuristic only, so plain atomics without a common lock.
	launches     atomic.Uint64 // launches begun through the queue
	waitBegun    atomic.Uint64 // begun at the last wait
	waitLaunches atomic.Uint64 // launches at the last wait
	run          atomic.Uint64 // launches between the last two waits, if they queued only those; else 0
}

// expectWait counts a launch through the queue, the n-th call begun on the stream, and
// guesses whether a wait comes next.
func (f *flagState) expectWait(n uint64) bool {
	pos := f.launches.Add(1) - f.waitLaunches.Load()
	run := f.run.Load()
	return run != 0 && pos == run && n-f.waitBegun.Load() == pos
}

// set records the flag write that followed launch n.
func (f *flagState) set(n uint64, token uint32) {
	f.mu.Lock()
	if n > f.at {
		f.at, f.token = n, token
	}
	f.mu.Unlock()
}

// take gives the token of the flagged launch that was the last call begun on the
// stream, when snap (streamState.snapshot) shows it was and none is in flight; the record
// is consumed either way.
func (f *flagState) take(snap uint64) (uint32, bool) {
	f.mu.Lock()
	at, token := f.at, f.token
	f.at = 0
	f.mu.Unlock()
	return token, at != 0 && at+1 == snap
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
		f.run.Store(0)
	}
}

// syncFlagged is syncQuiet with flags: the flag's wait when the stream's last call was
// a flagged launch, StreamSynchronize otherwise. The snapshot is taken before the record
// is checked, so a call begun in between makes it a StreamSynchronize, and what a
// success certifies idle is exactly what the flag covers.
func (w *queueWatch) syncFlagged(s hipsys.Stream) error {
	q := w.state(s)
	snap := q.snapshot()
	q.flag.waited(q.begun.Load())
	token, ok := q.flag.take(snap)
	var err error
	if ok && !q.shared.Load() {
		err = w.flags.StreamWaitFlag(s, token)
	} else {
		err = w.Platform.StreamSynchronize(s)
	}
	if err == nil && snap != 0 {
		q.sawIdle(snap)
	}
	return err
}

// copySmall queues a small read's copy, flagged where the platform can: the read's wait
// (waitSmall) follows it at once, so no guess is needed, and the wait takes the flag
// when nothing was queued on the stream after the copy.
func (w *queueWatch) copySmall(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	q := w.state(s)
	fc := w.flaggedCopies
	if w.flags == nil || fc == nil || q.shared.Load() {
		return w.MemcpyDtoHAsync(dst, src, size, s)
	}
	n := q.begun.Add(1)
	token, err := fc.MemcpyDtoHAsyncFlagged(dst, src, size, s)
	if token != 0 {
		q.flag.set(n, token)
	}
	q.end()
	return err
}

// flagging gives the watch and the queue wrapper what flags need, when the platform and
// its queue have them.
func flagging(p hipsys.Platform, q hipsys.LaunchQueue) (hipsys.FlagWaiter, hipsys.FlaggingQueue) {
	fw, ok1 := hipsys.As[hipsys.FlagWaiter](p)
	fq, ok2 := q.(hipsys.FlaggingQueue)
	if !ok1 || !ok2 {
		return nil, nil
	}
	return fw, fq
}
