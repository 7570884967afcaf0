package stream

import "github.com/cubehip/cubehip/modules/hipsys"

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
	policy  DropPolicy
	staged  []Releaser
	pending []Releaser
	fence   Fence
	count   int
	bytes   uint64
}

// NewDropQueue returns an empty queue with policy.
func NewDropQueue(policy DropPolicy) *DropQueue { return &DropQueue{policy: policy} }

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
// done. A failed wait is reported after the cycle completes: the device faulted, so
// nothing still reads the buffers and releasing them is safe. If no fence can be
// recorded the stream is synchronized instead; if even that fails, the items are kept
// (a leak rather than a use-after-free) and the error returned.
func (q *DropQueue) Flush(p hipsys.Platform, stream hipsys.Stream) error {
	var werr error
	if q.fence.Valid() {
		werr = q.fence.Wait()
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
	return werr
}

// releaseAll releases every item and returns the emptied slice for reuse.
func releaseAll(rs []Releaser) []Releaser {
	for i, r := range rs {
		_ = r.Release()
		rs[i] = nil
	}
	return rs[:0]
}
