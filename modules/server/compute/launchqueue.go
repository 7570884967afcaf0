package compute

import (
	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// queuedLaunches is what a Server keeps of the launches it handed to the platform's
// launch queue (hipsys.LaunchQueue), until the queue has said whether the driver took
// them.
//
// Differs from CubeCL in when a refusal is seen, not in what it leaves. A launch on
// the fast path (stream.Quick) goes into the queue and Launch returns before the driver
// has answered; the queue's thread issues it while the caller does its next launch's
// bookkeeping, which is what lets a launch loop run at the driver's own rate. Every
// other call of the Server first settles the queue (settleQueue: it waits for the
// queued launches to be issued and takes the refusals), and a refusal then leaves the
// buffers as CubeCL would have left them had it been seen at once: the refused
// launch's outputs carry its error, and so do the outputs of every launch queued after
// it that read them (those ran on bytes nothing wrote), while a buffer that a later
// launch rewrote from clean inputs is clean again. Only launches can come between a
// refusal and its settling (anything else settles first), and at most the queue's depth
// of them, so the records below are enough to replay that.
type queuedLaunches struct {
	q    hipsys.LaunchQueue
	recs []queuedLaunch // by seq, modulo twice the queue's depth: see record
	last uint64         // the latest seq recorded

	refused []hipsys.LaunchRefusal // returned by the queue, not yet applied (applyRefused empties it)

	// direct is the launch the queue issued on the caller's thread (seq 0) when
	// refusals of earlier ones came back with it: it too may have read what they never
	// wrote. Valid while hasDirect.
	direct    queuedLaunch
	hasDirect bool
}

type queuedLaunch struct {
	k    *Kernel
	id   StreamID
	bufs []Binding // uncounted views, as the launch had them; reused by the next record
}

func newQueuedLaunches(q hipsys.LaunchQueue) *queuedLaunches {
	return &queuedLaunches{q: q, recs: make([]queuedLaunch, 2*q.Depth())}
}

// record keeps launch seq. A refusal comes back no later than from the launch queued
// Depth() after it (or from a settle, which only comes sooner), so a ring of twice the
// depth still holds every record from the refused launch to the latest when it does.
func (ql *queuedLaunches) record(seq uint64, k *Kernel, bufs []Binding, id StreamID) {
	ql.recs[seq%uint64(len(ql.recs))].set(k, bufs, id)
	ql.last = seq
}

func (r *queuedLaunch) set(k *Kernel, bufs []Binding, id StreamID) {
	r.k, r.id = k, id
	r.bufs = append(r.bufs[:0], bufs...)
}

// launchQueued hands a launch to the queue: the launch of enqueueLaunch when it is on the
// fast path. Refusals of earlier launches that come back with it are applied after the
// fast path's command has ended (launchQuick).
func (s *Server) launchQueued(ck *compiled, k *Kernel, grid hipsys.Dim3, sys hipsys.Stream, a *hipsys.KernelArgs, bufs []Binding, id StreamID) error {
	ql := s.queue
	seq, refused, err := ql.q.Launch(ck.fn, grid, k.Block, k.SharedMem, sys, a, ql.refused)
	ql.refused = refused
	if seq != 0 {
		ql.record(seq, k, bufs, id)
	} else if len(refused) > 0 {
		ql.direct.set(k, bufs, id)
		ql.hasDirect = true
	}
	return err
}

// settleQueue waits for the queued launches to be issued and applies the refusals among
// them: what every Server call but a launch does first, once.
func (s *Server) settleQueue() {
	s.carryLateFailures()
	if s.queue == nil {
		return
	}
	ql := s.queue
	ql.refused = ql.q.Settle(ql.refused)
	s.applyRefused()
}

// applyRefused replays, for the refusals in ql.refused, what the write scopes would have
// done had each been seen when it happened: from the first refused launch to the latest,
// in order, a launch that was refused, or that read a buffer an earlier one left
// failed, leaves its outputs failed (with the input's failure first, as a scope checks
// inputs before it runs anything); any other launch wrote its outputs, which are then no
// longer failed by this replay.
func (s *Server) applyRefused() {
	ql := s.queue
	if len(ql.refused) == 0 {
		return
	}
	refusal := make(map[uint64]error, len(ql.refused))
	for _, r := range ql.refused {
		refusal[r.Seq] = r.Err
	}
	type failure struct {
		err error
		id  StreamID // the launch's stream, for the failure hook
	}
	failed := map[memory.ID]failure{}
	var order []Binding // the failed buffers, first failure first, for the failures set below
	replay := func(r *queuedLaunch, refusal error) {
		var err error
		for i, b := range r.bufs {
			if i < len(r.k.IO) && r.k.IO[i] == Write {
				continue
			}
			if f, ok := failed[b.ID()]; ok {
				err = f.err
				break
			}
		}
		if err == nil && refusal != nil {
			err = launchError(r.k, refusal)
		}
		for i, b := range r.bufs {
			if i < len(r.k.IO) && r.k.IO[i] == Read {
				continue
			}
			if err != nil {
				if _, ok := failed[b.ID()]; !ok {
					order = append(order, b)
				}
				failed[b.ID()] = failure{err, r.id}
			} else {
				delete(failed, b.ID())
			}
		}
	}
	for seq := ql.refused[0].Seq; seq <= ql.last; seq++ {
		replay(&ql.recs[seq%uint64(len(ql.recs))], refusal[seq])
	}
	if ql.hasDirect {
		replay(&ql.direct, nil) // after every queued one: it came after them all
		ql.hasDirect = false
	}
	for _, b := range order {
		if f, ok := failed[b.ID()]; ok {
			s.one[0] = b
			s.streams.FailedWriting(f.id, s.one[:], f.err)
		}
	}
	s.one[0] = Binding{}
	clear(ql.refused)
	ql.refused = ql.refused[:0]
}
