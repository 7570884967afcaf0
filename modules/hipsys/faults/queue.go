package faults

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// emulatedDepth is the depth of the queue the wrapper gives over a platform without one:
// small, so that tests reach the refusals a Launch returns as well as Settle's.
const emulatedDepth = 8

var (
	_ hipsys.LaunchQueuer  = (*Platform)(nil)
	_ hipsys.FlaggingQueue = (*flaggingQueue)(nil)
)

// OpenLaunchQueue gives a launch queue over the wrapped platform, so that code which
// uses one is tested with faults too, on every platform:
//
//   - over a platform with a queue of its own (nvidia), that queue, with an armed
//     hipModuleLaunchKernel rule failing the launch as ModuleLaunchKernel would: at
//     once (seq 0), after the queue is settled, so nothing queued overtakes the refusal;
//   - over any other (cpu, amd), an emulation: each launch is issued at once, but the
//     platform's answer, or the armed rule's, comes back as a queue's thread's would, as
//     a refusal numbered by the launch, from Settle or from the Launch emulatedDepth
//     launches later. Every launch is issued by the time Launch returns, so the other
//     calls need not wait for anything.
//
// The queue flags launches (hipsys.FlaggingQueue) when the wrapped platform's does, and
// only then: a flagged launch is failed by a rule on hipModuleLaunchKernelFlagged or on
// hipModuleLaunchKernel. A rule on hipOpenLaunchQueue fails the open itself, as a queue
// held elsewhere would.
func (w *Platform) OpenLaunchQueue(device int) (hipsys.LaunchQueue, error) {
	if err := w.check(cOpenLaunchQueue); err != nil {
		return nil, err
	}
	if lq, ok := hipsys.As[hipsys.LaunchQueuer](w.inner); ok {
		q, err := lq.OpenLaunchQueue(device)
		if err != nil {
			return nil, err
		}
		wq := &wrappedQueue{w: w, q: q}
		if fq, ok := q.(hipsys.FlaggingQueue); ok {
			return &flaggingQueue{wrappedQueue: wq, fq: fq}, nil
		}
		return wq, nil
	}
	w.queueMu.Lock()
	defer w.queueMu.Unlock()
	if w.queues == nil {
		w.queues = map[int]bool{}
	}
	if w.queues[device] {
		return nil, &hipsys.Error{Platform: w.inner.Name(), Call: "hipOpenLaunchQueue", Status: hipsys.ErrorContextAlreadyInUse,
			Detail: fmt.Sprintf("the launch queue of device %d is held", device)}
	}
	w.queues[device] = true
	return &emulatedQueue{w: w, device: device}, nil
}

type wrappedQueue struct {
	w *Platform
	q hipsys.LaunchQueue
}

func (q *wrappedQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	if err := q.w.check(cModuleLaunchKernel); err != nil {
		return 0, q.q.Settle(refused), err
	}
	return q.q.Launch(fn, grid, block, shmem, s, args, refused)
}

func (q *wrappedQueue) Settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	return q.q.Settle(refused)
}

func (q *wrappedQueue) Depth() int   { return q.q.Depth() }
func (q *wrappedQueue) Close() error { return q.q.Close() }

// flaggingQueue is wrappedQueue over a queue that flags launches: a type of its own, so
// that a queue which does not is not seen to.
type flaggingQueue struct {
	*wrappedQueue
	fq hipsys.FlaggingQueue
}

func (q *flaggingQueue) LaunchFlagged(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, uint32, []hipsys.LaunchRefusal, error) {
	if err := q.w.checkVariant(cModuleLaunchKernelFlagged); err != nil {
		return 0, 0, q.q.Settle(refused), err
	}
	return q.fq.LaunchFlagged(fn, grid, block, shmem, s, args, refused)
}

// emulatedQueue issues each launch at once and holds its failure back as a refusal.
type emulatedQueue struct {
	w       *Platform
	device  int
	mu      sync.Mutex
	seq     uint64
	pending []hipsys.LaunchRefusal // in seq order
	closed  bool
}

var errClosed = errors.New("faults: launch queue closed")

func (q *emulatedQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, refused, &hipsys.Error{Platform: q.w.inner.Name(), Call: "hipModuleLaunchKernel", Status: hipsys.ErrorInvalidHandle, Detail: errClosed.Error()}
	}
	q.seq++
	err := q.w.check(cModuleLaunchKernel)
	if err == nil {
		err = q.w.inner.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
	}
	if err != nil {
		q.pending = append(q.pending, hipsys.LaunchRefusal{Seq: q.seq, Err: err})
	}
	// The refusals a queue's thread would have flagged by the time this launch needed
	// their slots: those emulatedDepth or more launches back.
	n := 0
	for n < len(q.pending) && q.seq-q.pending[n].Seq >= emulatedDepth {
		n++
	}
	refused = append(refused, q.pending[:n]...)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	return q.seq, refused, nil
}

func (q *emulatedQueue) Settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	q.mu.Lock()
	defer q.mu.Unlock()
	refused = append(refused, q.pending...)
	q.pending = q.pending[:0]
	return refused
}

func (q *emulatedQueue) Depth() int { return emulatedDepth }

func (q *emulatedQueue) Close() error {
	refused := q.Settle(nil)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	q.w.queueMu.Lock()
	delete(q.w.queues, q.device)
	q.w.queueMu.Unlock()
	return hipsys.RefusalsError(refused)
}
