package stream

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// releaser is the release worker: it holds the bindings a stream borrowed from another
// stream's pools until the borrowing stream's work on them is done, then releases them,
// so the owning pool reuses the slice only after its last user finished. The garbage
// collector plays no part.
//
// Differs from CubeCL: there is no GC stream. CubeCL makes a dedicated stream wait on the
// consumer's event and host-waits an event recorded on that stream; the worker here
// host-waits the consumer's event itself, which orders the release after the same work
// without a stream that exists only to be waited on. While the consumer records a
// capture no event is recorded at all: its work runs only at replay, so the pins go to
// the capture and are released with the graph (or at once if the graph is refused).
type releaser struct {
	log  *slog.Logger
	ch   chan *releaseBatch
	wg   sync.WaitGroup
	mu   sync.RWMutex // send vs close
	shut bool
	// after, when set, is called once a batch's bindings are released (MultiStream's
	// SetReleaseHook); loaded atomically, since the worker reads it while the owner sets it.
	after atomic.Pointer[func()]

	// inflight is the batches handed over whose fence the worker has not yet waited for
	// to the end, so that the owner may give back those whose fence it finds complete
	// (returnCompleted) rather than wait for the worker to reach them: the worker takes
	// batches in order, and one on a busy stream holds up the others behind it. A batch
	// leaves the list before the worker destroys its fence, so a query never meets a
	// destroyed event.
	pmu      sync.Mutex
	inflight []*releaseBatch
	pending  atomic.Int32 // len(inflight), read without the lock
	// settling counts the batches the worker has taken off inflight, their fence
	// complete, and not yet given back: returnCompleted waits for them, so that a caller
	// that finds every fence done (MemoryUsage after a Sync) sees every binding given
	// back, not one the worker holds between forget and its releases.
	settling atomic.Int32
}

type releaseBatch struct {
	pins  []Binding
	fence Fence
	// done, when set, is closed once the batch is settled: a batch with done and nothing
	// else is a barrier (see barrier).
	done chan struct{}
	// taken is set by whichever of the worker and the owner releases the bindings: the
	// other leaves them.
	taken atomic.Bool
}

// releaseQueue is CubeCL's GC channel bound: a stream that outruns the worker blocks
// rather than piling up events.
const releaseQueue = 8

func startReleaser(log *slog.Logger) *releaser {
	r := &releaser{log: log, ch: make(chan *releaseBatch, releaseQueue)}
	r.wg.Add(1)
	go r.run()
	return r
}

func (r *releaser) run() {
	defer r.wg.Done()
	for b := range r.ch {
		r.settle(b)
	}
}

// settle waits for one batch's fence and releases its bindings, unless the owner
// already did. A failed wait leaks them: the device faulted mid-use, and handing the
// slices back could let a new allocation be written while the faulted work still runs.
func (r *releaser) settle(b *releaseBatch) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("stream: release worker panicked; bindings leaked", "panic", fmt.Sprint(p))
		}
		if b.done != nil {
			close(b.done)
		}
	}()
	werr := b.fence.sync()
	r.settling.Add(1)
	defer r.settling.Add(-1)
	r.forget(b)
	if err := errors.Join(werr, b.fence.destroy()); err != nil {
		r.log.Warn("stream: cross-stream bindings leaked: their consumer's fence failed", "err", err, "bindings", len(b.pins))
		return
	}
	if !b.taken.CompareAndSwap(false, true) {
		return
	}
	for i := range b.pins {
		_ = b.pins[i].Release()
	}
	if f := r.after.Load(); f != nil && len(b.pins) > 0 {
		(*f)()
	}
}

// send hands a batch over; after close it settles the batch on the caller's goroutine.
func (r *releaser) send(b *releaseBatch) {
	if len(b.pins) > 0 && b.fence.Valid() {
		r.pmu.Lock()
		r.inflight = append(r.inflight, b)
		r.pending.Store(int32(len(r.inflight)))
		r.pmu.Unlock()
	}
	r.mu.RLock()
	if !r.shut {
		r.ch <- b
		r.mu.RUnlock()
		return
	}
	r.mu.RUnlock()
	r.settle(b)
}

// forget takes b off the inflight list.
func (r *releaser) forget(b *releaseBatch) {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	for i, x := range r.inflight {
		if x == b {
			r.inflight = slices.Delete(r.inflight, i, i+1)
			r.pending.Store(int32(len(r.inflight)))
			return
		}
	}
}

// returnCompleted releases, on the caller's goroutine, the bindings of every batch
// handed over whose fence has completed (a query, no wait) and that the worker has not
// released yet. A fence the query does not report complete, failed included, is left to
// the worker.
func (r *releaser) returnCompleted() {
	if r.pending.Load() == 0 && r.settling.Load() == 0 {
		return
	}
	n := 0
	r.pmu.Lock()
	for _, b := range r.inflight {
		if b.taken.Load() || !b.fence.done() || !b.taken.CompareAndSwap(false, true) {
			continue
		}
		for i := range b.pins {
			_ = b.pins[i].Release()
		}
		n++
	}
	r.pmu.Unlock()
	// A batch the worker took off the list is given back in a moment (releases, no
	// wait): wait for it rather than report its bindings in use.
	for r.settling.Load() > 0 {
		runtime.Gosched()
	}
	if f := r.after.Load(); f != nil && n > 0 {
		(*f)()
	}
}

// barrier returns a channel closed once every batch sent before it is settled: the
// worker settles batches in the order they were sent. It may block as send does.
func (r *releaser) barrier() <-chan struct{} {
	done := make(chan struct{})
	r.send(&releaseBatch{done: done})
	return done
}

func (r *releaser) close() {
	r.mu.Lock()
	r.shut = true
	close(r.ch)
	r.mu.Unlock()
	r.wg.Wait()
}
