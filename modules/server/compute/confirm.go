package compute

import (
	"sync"
	"sync/atomic"
)

// confirmations numbers the points in each stream's work that a wait can confirm, and
// remembers, per stream, the latest point a successful Sync confirmed: every copy and
// launch queued on the stream before that point has finished and wrote its bytes.
//
// A failed wait for a staging chunk says that something up to the chunk's event failed,
// not which work: on a GPU an asynchronous fault is reported by every later wait. The
// chunk's write is to blame only while nothing has confirmed it. Once a Sync covering
// it succeeded, the write is known good, and blaming it would turn a buffer whose bytes
// the caller was told are written into one that reads as an error (the later wait
// still fails the call that waits: its own work is not known good).
type confirmations struct {
	next atomic.Uint64 // the last point handed out; points start at 1

	mu   sync.Mutex // guards done: Sync's future confirms outside the owner's lock
	done map[StreamID]uint64
}

// mark is a new point, later than every point handed out before: work queued before
// the call is before it.
func (c *confirmations) mark() uint64 { return c.next.Add(1) }

// confirm records that a wait for point on stream id succeeded.
func (c *confirmations) confirm(id StreamID, point uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = map[StreamID]uint64{}
	}
	c.done[id] = max(c.done[id], point)
}

// confirmed reports whether work marked at point on stream id is known to have
// finished without a failure.
func (c *confirmations) confirmed(id StreamID, point uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return point != 0 && point <= c.done[id]
}
