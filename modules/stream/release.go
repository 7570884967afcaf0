package stream

import (
	"fmt"
	"log/slog"
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
	ch   chan releaseBatch
	wg   sync.WaitGroup
	mu   sync.RWMutex // send vs close
	shut bool
	// after, when set, is called once a batch's bindings are released (MultiStream's
	// SetReleaseHook); loaded atomically, since the worker reads it while the owner sets it.
	after atomic.Pointer[func()]
}

type releaseBatch struct {
	pins  []Binding
	fence Fence
}

// releaseQueue is CubeCL's GC channel bound: a stream that outruns the worker blocks
// rather than piling up events.
const releaseQueue = 8

func startReleaser(log *slog.Logger) *releaser {
	r := &releaser{log: log, ch: make(chan releaseBatch, releaseQueue)}
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

// settle waits for one batch's fence and releases its bindings. A failed wait leaks
// them: the device faulted mid-use, and handing the slices back could let a new
// allocation be written while the faulted work still runs.
func (r *releaser) settle(b releaseBatch) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("stream: release worker panicked; bindings leaked", "panic", fmt.Sprint(p))
		}
	}()
	if err := b.fence.Wait(); err != nil {
		r.log.Warn("stream: cross-stream bindings leaked: their consumer's fence failed", "err", err, "bindings", len(b.pins))
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
func (r *releaser) send(b releaseBatch) {
	r.mu.RLock()
	if !r.shut {
		r.ch <- b
		r.mu.RUnlock()
		return
	}
	r.mu.RUnlock()
	r.settle(b)
}

func (r *releaser) close() {
	r.mu.Lock()
	r.shut = true
	close(r.ch)
	r.mu.Unlock()
	r.wg.Wait()
}
