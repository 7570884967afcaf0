package compute

import (
	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute/internal/ledger"
)

// Completion flags (hipsys.FlaggingQueue, hipsys.FlagWaiter; the nvidia platform has
// them): the queue watch's side. What a flag covers, and the guess of which launch a
// wait follows, are the stream's ledger entry's (internal/ledger, flags.go): a launch
// through the queue is flagged when the entry expects a wait next (watchedQueue.Launch),
// and a stream-wide wait spins on the flag when the entry shows the flagged call was the
// stream's last, with nothing in flight and the stream not shared. A wrong guess costs
// the flag's write, never a wrong answer.

// syncFlagged is syncQuiet with flags: the flag's wait when the stream's last call was
// a flagged one (ledger.Stream.FlagWait), StreamSynchronize otherwise.
func (w *queueWatch) syncFlagged(q *ledger.Stream) error {
	snap, token, onFlag := q.FlagWait()
	var err error
	if onFlag {
		err = w.flags.StreamWaitFlag(q.Sys(), token)
	} else {
		err = w.calls.StreamSynchronize(q.Sys())
	}
	if err == nil {
		q.SawIdle(snap)
	}
	return err
}

// copySmall queues a small read's copy, flagged where the platform can: the read's wait
// (waitSmall) follows it at once, so no guess is needed, and the wait takes the flag
// when nothing was queued on the stream after the copy.
func (w *queueWatch) copySmall(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	q := w.ledger.Of(s)
	fc := w.flaggedCopies
	if w.flags == nil || fc == nil || q.Shared() {
		return w.MemcpyDtoHAsync(dst, src, size, s)
	}
	n := q.Begin()
	token, err := fc.MemcpyDtoHAsyncFlagged(dst, src, size, s)
	q.Flagged(n, token)
	q.End()
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
