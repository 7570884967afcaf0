package stream

import (
	"log/slog"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Releaser is anything the drop queue keeps alive for the device: a pinned staging
// buffer's handle, an info buffer no cache kept.
type Releaser interface{ Release() error }

// DropPolicy says when a stream's drop queue asks to be flushed.
type DropPolicy struct {
	MaxCount int    // items staged
	MaxBytes uint64 // bytes staged
}

// DefaultDropPolicy is CubeCL's HIP policy: 64 items or 64 MiB. Integrated GPUs use
// IntegratedDropPolicy: an APU can hang with many host buffers in flight.
var (
	DefaultDropPolicy    = DropPolicy{MaxCount: 64, MaxBytes: 64 << 20}
	IntegratedDropPolicy = DropPolicy{MaxCount: 16, MaxBytes: 64 << 20}
)

// DropQueue keeps host buffers alive until the device has consumed them (CubeCL's
// PendingDropQueue): an async upload reads its pinned source after the call returned, so
// the source may be released only once a fence after the copy has completed.
//
// Items are staged by Push; Flush waits for the fence of the previous flush, releases
// what that flush moved to pending, moves the staged items to pending and records a new
// fence. An item therefore lives at most two flushes, and freeing a batch takes two
// (hence the double flushes at cleanup and around a capture).
//
// Flush waits on the host, so it must never run while the stream records a capture:
// [Stream.FlushDrops] is the guarded call. The queue belongs to its stream and is used
// only by the goroutine driving that stream.
type DropQueue struct {
	// What ShouldFlush reads, after every launch, first and together.
	count  int
	bytes  uint64
	policy DropPolicy

	log     *slog.Logger
	staged  []Releaser
	pending []Releaser
	fence   Fence
}

// NewDropQueue returns an empty queue with policy; log (nil: slog.Default()) hears about
// failed fence waits.
func NewDropQueue(policy DropPolicy, log *slog.Logger) *DropQueue {
	if log == nil {
		log = slog.Default()
	}
	return &DropQueue{policy: policy, log: log}
}

// Push stages r, which holds size bytes, until a later flush's fence.
func (q *DropQueue) Push(r Releaser, size uint64) {
	q.staged = append(q.staged, r)
	q.count++
	q.bytes += size
}

// ShouldFlush reports whether the policy's item or byte bound was reached.
func (q *DropQueue) ShouldFlush() bool {
	return q.count >= q.policy.MaxCount || q.bytes >= q.policy.MaxBytes
}

// Len reports the items staged and pending.
func (q *DropQueue) Len() (staged, pending int) { return len(q.staged), len(q.pending) }

// Flush runs one flush cycle on stream. It blocks until the previous flush's fence is
// done. A failed wait is logged and otherwise ignored, as in CubeCL: the device faulted,
// so nothing still reads the buffers and releasing them is safe, and the fault itself
// surfaces from the fences that reads and syncs wait on.
//
// The error is only that no fence could be recorded (the items then stay pending, and
// the next flush synchronizes the stream before releasing them) or that the stream could
// not be synchronized (the items are kept: a leak rather than a use-after-free). It says
// nothing about the work already enqueued, so a caller must not taint anything with it.
func (q *DropQueue) Flush(p hipsys.Platform, stream hipsys.Stream) error {
	if q.fence.Valid() {
		if err := q.fence.Wait(); err != nil {
			q.log.Warn("stream: drop queue: fence wait failed; releasing its buffers anyway", "err", err)
		}
		q.fence = Fence{}
		q.pending = releaseAll(q.pending)
	}
	if len(q.pending) > 0 {
		// Pending without a fence: the last flush could not record one.
		if err := p.StreamSynchronize(stream); err != nil {
			return stepError("drop queue: synchronize the stream", err)
		}
		q.pending = releaseAll(q.pending)
	}
	q.staged, q.pending = q.pending, q.staged
	q.count, q.bytes = 0, 0
	if len(q.pending) > 0 {
		f, err := NewFence(p, stream)
		if err != nil {
			return err
		}
		q.fence = f
	}
	return nil
}

// releaseAll releases every item and returns the emptied slice for reuse.
func releaseAll(rs []Releaser) []Releaser {
	for i, r := range rs {
		_ = r.Release()
		rs[i] = nil
	}
	return rs[:0]
}
