package memory

import (
	"fmt"
	"sync/atomic"
)

// ID names one logical allocation (one handle family) for the life of the
// process. IDs are never reused, so a stale reference can always be told
// apart from the allocation that later took over its slice.
type ID uint64

// lastID is process-wide, as CubeCL's ManagedMemoryId counter is: handles of
// different managers (one per stream) must never collide when a binding
// crosses streams.
var lastID atomic.Uint64

// PersistentPool is the pool index of the persistent pool in a [Location].
// Dynamic pools are numbered from 0 in routing order, so a layout holds at
// most 254 of them.
const PersistentPool uint8 = 255

// Location says where an allocation lives inside its manager. Pools rewrite
// it in place when they coalesce or renumber, which is why lookups go through
// the descriptor rather than a copy held by the caller.
type Location struct {
	Pool  uint8  // routing index, or PersistentPool
	Page  uint32 // page (exclusive, direct, persistent: one allocation each)
	Slice uint32 // slice inside the page; 0 outside the sliced pools
	Bound bool   // false until a reservation or Bind placed the allocation
}

func (l Location) String() string {
	if !l.Bound {
		return "unbound"
	}
	return fmt.Sprintf("pool %d page %d slice %d", l.Pool, l.Page, l.Slice)
}
