package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// maxPending bounds a stream's queue: a producer that runs ahead of the worker by this
// many commands blocks until the worker catches up, as a GPU's ring does when full, so a
// loop of launches cannot grow the queue without bound.
const maxPending = 4096

// stream is an in-order queue of commands and the goroutine that runs them. Commands
// are numbered from 1 in the order they are queued (submitted counts them) and finish in
// that order (completed counts them), so "all work up to command n" is just the number
// n: events, cross-stream waits and synchronization are all built on it.
type stream struct {
	p    *Platform
	kind streamKind
	dev  int // the device current when it was created; the null stream serves them all

	mu        sync.Mutex
	work      sync.Cond // the worker waits here for commands
	done      sync.Cond // waiters (sync, events, other streams, a full queue) wait here
	pending   []*command
	spare     []*command // the worker's other batch buffer, swapped with pending
	free      []*command // finished commands kept for reuse
	submitted uint64
	completed uint64
	idle      bool // the worker is parked on work
	running   bool // a batch is running, on the worker or on a waiter that took it (await)
	// completedAt mirrors completed for a spinning waiter, which reads it without mu.
	completedAt atomic.Uint64
	waiters     int // goroutines parked on done; the worker broadcasts only when > 0
	closing     bool
	err         error    // the first asynchronous failure since the last stream-wide synchronization
	errAt       uint64   // the number of the command that failed with err
	capture     *capture // non-nil while the stream captures
}

func newStream(p *Platform, kind streamKind) *stream {
	s := &stream{p: p, kind: kind}
	s.work.L = &s.mu
	s.done.L = &s.mu
	go s.run()
	return s
}

// run is the worker: it takes the whole queue at once, runs it without the lock (so
// producers never wait for a kernel), and counts each command done as it finishes. A
// goroutine waiting for the stream may run a batch itself instead (await); the worker
// then waits until that batch is done.
func (s *stream) run() {
	s.mu.Lock()
	for {
		for len(s.pending) == 0 || s.running {
			if s.closing && len(s.pending) == 0 && !s.running {
				s.mu.Unlock()
				s.p.retiredMu.Lock()
				delete(s.p.retired, s)
				s.p.retiredMu.Unlock()
				return
			}
			s.idle = true
			s.work.Wait()
		}
		s.execBatch(len(s.pending))
	}
}

// execBatch takes the first n queued commands and runs them, one at a time, without the
// lock. mu is held on entry and on return; running keeps a second executor out
// meanwhile, so commands still run one at a time and in order.
func (s *stream) execBatch(n int) {
	batch := s.pending[:n]
	s.pending = append(s.spare[:0], s.pending[n:]...)
	s.running = true
	s.mu.Unlock()
	for i, c := range batch {
		err := c.exec()
		if err == nil && c.kind != cmdLaunch {
			s.p.wroteBy(c)
		}
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err, s.errAt = err, s.completed+1
		}
		s.completed++
		s.completedAt.Store(s.completed)
		c.clear()
		s.free = append(s.free, c)
		batch[i] = nil
		if s.waiters > 0 {
			s.done.Broadcast()
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.spare = batch[:0]
	s.running = false
}

// await blocks until the first seq commands have finished. mu is held on entry and on
// return.
//
// A waiter that finds commands queued and no batch running runs them itself, on its own
// thread, rather than waking the worker and sleeping until it is woken in turn. It runs
// only the commands up to seq, never one after: one of those could wait on a stream
// whose batch this goroutine is itself running further up its stack (it got here from a
// wait inside that batch), which would never finish. Everything up to seq was queued
// before the wait that brought it here, so nothing it waits on can be behind it. On a
// thread the Go runtime did not start (a C host calling libcubehip) each of those two
// hand-offs costs a trip through the OS scheduler, because such a goroutine is locked to
// its thread, many times a Go caller's cost (docs/benchmarks.md, "cpu device: waits
// from C hosts"). When the worker already runs the batch, the waiter spins for a
// short while (a small kernel finishes in microseconds) before it sleeps.
func (s *stream) await(seq uint64) {
	spun := false
	for s.completed < seq {
		if !s.running && len(s.pending) > 0 {
			// Nothing runs, so every command taken so far has finished: pending[0] is
			// command completed+1.
			s.execBatch(int(min(seq-s.completed, uint64(len(s.pending)))))
			s.wakeWorker()
			continue
		}
		if !spun && spinWait {
			spun = true
			s.mu.Unlock()
			deadline := time.Now().Add(awaitSpin)
			for s.completedAt.Load() < seq && time.Now().Before(deadline) {
			}
			s.mu.Lock()
			continue
		}
		s.waiters++
		s.done.Wait()
		s.waiters--
	}
}

// wakeWorker hands the worker what a helping waiter left: commands queued while it ran,
// or a shutdown. The caller holds mu.
func (s *stream) wakeWorker() {
	if s.idle && (len(s.pending) > 0 || s.closing) {
		s.idle = false
		s.work.Signal()
	}
}

// awaitSpin is how long a waiter spins for a batch the worker is running before it
// sleeps: longer than a small kernel, far shorter than a large one, which is then waited
// for at the price of one wake-up.
const awaitSpin = 50 * time.Microsecond

// spinWait is whether spinning can help at all: with one processor the spinning waiter
// would only keep the worker from running.
var spinWait = runtime.GOMAXPROCS(0) > 1

// push queues c and wakes the worker. The caller holds mu.
func (s *stream) push(c *command) {
	s.pending = append(s.pending, c)
	s.submitted++
	if s.idle {
		// Clearing idle here means a burst of pushes signals once, not once per command.
		s.idle = false
		s.work.Signal()
	}
}

// take is a command to fill, reused when one is free. The caller holds mu.
func (s *stream) take() *command {
	if n := len(s.free); n > 0 {
		c := s.free[n-1]
		s.free = s.free[:n-1]
		return c
	}
	return new(command)
}

// enqueue queues a copy of t, or records it as a graph node while the stream captures.
// t is the caller's template and is not retained.
func (s *stream) enqueue(call string, t *command) error {
	nullSeq := s.nullDependency()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capture != nil {
		return s.capture.add(call, t)
	}
	if s.closing {
		return errorf(call, hipsys.ErrorInvalidHandle, "stream destroyed")
	}
	for len(s.pending) >= maxPending {
		s.waiters++
		s.done.Wait()
		s.waiters--
	}
	s.legacyWaits(nullSeq)
	s.submitOne(t)
	return nil
}

// submitOne turns template t into a queued command. The caller holds mu.
func (s *stream) submitOne(t *command) {
	switch t.kind {
	case cmdWaitEvent:
		// Resolved now, against the record the event holds at this moment, as HIP
		// resolves a wait when it is issued. A never-recorded event is already complete.
		target, seq := t.ev.position()
		if target == nil {
			// The latest record has already run: nothing is left to wait for, but a
			// failure of the work before it must still reach this stream, as on a GPU
			// (where a fault stops every stream) and as a wait queued a moment earlier
			// would have passed it on (command.go, cmdWait): else whether work ordered
			// after failed work learns of the failure would depend on how fast the
			// other stream's worker ran, and a read ordered after a faulted kernel could
			// return the bytes it never wrote, with no error. The wait is queued all the
			// same; it finds its target done and returns at once.
			target, seq = t.ev.latest()
		}
		if target == nil || target == s {
			// Waiting on one's own earlier work is implied by in-order execution.
			return
		}
		c := s.take()
		c.kind, c.target, c.seq = cmdWait, target, seq
		s.push(c)
		return
	case cmdWait:
		if t.target == nil || t.target == s {
			return
		}
	}
	c := s.take()
	c.assign(t)
	if c.kind == cmdRecord {
		c.gen = c.ev.mark(s, s.submitted+1)
	}
	s.push(c)
}

// waitFor blocks until the first seq commands have finished.
func (s *stream) waitFor(seq uint64) {
	s.mu.Lock()
	s.await(seq)
	s.mu.Unlock()
}

// synchronize waits for the work queued so far and returns (and clears) the stream's
// asynchronous failure, if any: StreamSynchronize and DeviceSynchronize are the
// stream-wide synchronizations that acknowledge it, after which the stream reports no
// error again until another command fails. (A GPU's fault stays for good; the cpu
// device is not damaged by one, so its streams recover.)
func (s *stream) synchronize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.await(s.submitted)
	err := s.err
	s.err, s.errAt = nil, 0
	return err
}

// failedBy is the stream's asynchronous failure if the failed command is among the
// first seq, which a synchronization that waited for them must report; nil otherwise.
// It does not clear the failure: every synchronization that waits past it sees it,
// until a stream-wide one acknowledges it.
func (s *stream) failedBy(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil && s.errAt <= seq {
		return s.err
	}
	return nil
}

// asyncError is the error a synchronizing call returns for an asynchronous failure:
// the call that waited, the failure's status, and the failed command's own error as
// the detail and the cause.
func asyncError(call string, failure error) error {
	return &hipsys.Error{Platform: name, Call: call, Status: hipsys.StatusOf(failure), Detail: failure.Error(), Cause: failure}
}

// drain waits for the work queued so far, leaving any pending error in place.
func (s *stream) drain() {
	s.mu.Lock()
	target := s.submitted
	s.mu.Unlock()
	s.waitFor(target)
}

// idleNow reports whether every queued command has finished, and the stream's
// asynchronous failure (not cleared) when it has.
func (s *stream) idleNow() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed == s.submitted, s.err
}

// shutdown lets the worker finish what is queued and exit.
func (s *stream) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	if s.idle {
		s.idle = false
		s.work.Signal()
	}
}

// FailOnDevice queues on stream h a command that fails on the stream's worker with
// hipErrorLaunchFailure and detail, as a kernel that faults on a GPU does: the call
// returns at once, and the failure is delivered as every asynchronous failure is, by
// the synchronizations that wait past it (see the package doc). It is how the layers
// above test where a device fault reported late lands without compiling a kernel that
// faults (which fails its launch the same way, with the status of its fault). While h captures,
// the failing command is recorded instead, and fails each replay.
func (p *Platform) FailOnDevice(h hipsys.Stream, detail string) error {
	const call = "hipModuleLaunchKernel"
	s, err := p.stream(call, h)
	if err != nil {
		return err
	}
	t := command{kind: cmdFault, fault: errorf(call, hipsys.ErrorLaunchFailure, detail)}
	return s.enqueue(call, &t)
}
