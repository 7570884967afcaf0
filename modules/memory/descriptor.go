package memory

import (
	"sync"
	"sync/atomic"
)

// descriptor is the shared state of one handle family: CubeCL's Arc'd
// {id, location} plus its two reference counts. The pool slice that holds the
// allocation owns one reference of each kind, as CubeCL's slice owns a clone
// of the handle.
//
// id and state are atomic because users clone and release handles from any
// goroutine; loc and cursor belong to the manager's goroutine.
type descriptor struct {
	id     atomic.Uint64
	state  atomic.Int64 // refs | handles<<32 | pooledBit; see below
	loc    Location
	cursor uint64
	// hint, when set, is told of each release that leaves only the pool's hold, from any
	// goroutine's give: the imported pool sets it on its families (only that pool does, so
	// Binding.Imported reads it), so that its reclaim looks at those allocations instead
	// of every import.
	hint atomic.Pointer[freeHints]
}

// freeHints collects descriptors whose last user reference was given up, from any
// goroutine, for the manager's goroutine to look at. A hint is only where to look: the
// reader checks the allocation itself (still the pool's, and free), so a stale or
// repeated one costs a check and nothing else.
type freeHints struct {
	mu   sync.Mutex
	list []*descriptor
}

func (h *freeHints) push(d *descriptor) {
	h.mu.Lock()
	h.list = append(h.list, d)
	h.mu.Unlock()
}

// take returns the hints so far, leaving none; buf is reused for the next ones.
func (h *freeHints) take(buf []*descriptor) []*descriptor {
	h.mu.Lock()
	out := h.list
	h.list = buf[:0]
	h.mu.Unlock()
	return out
}

// The two reference counts and the pool's hold share one word, so a handle
// is taken or given up with one atomic operation, and no reader ever sees
// one count updated without the other.
const (
	refMask   = 1<<32 - 1
	oneRef    = 1         // a binding: refs only (is_free)
	oneHandle = 1<<32 | 1 // a handle: refs and handles (can_mut)
	pooledBit = 1 << 62   // a pool slice holds the family
	poolHold  = oneHandle | pooledBit
)

func refsOf(v int64) int64    { return v & refMask }
func handlesOf(v int64) int64 { return (v >> 32) & (pooledBit>>32 - 1) }

// free reports CubeCL's is_free: only the pool's own slice still refers to
// the allocation. A nil descriptor is a slice that was never handed out.
func (d *descriptor) free() bool { return d == nil || refsOf(d.state.Load()) <= 1 }

// canMut reports CubeCL's can_mut: the pool's hold and at most one user
// handle.
func (d *descriptor) canMut() bool { return handlesOf(d.state.Load()) <= 2 }

// sole reports whether a pool slice holds the family and one user handle is
// its only other reference: no second handle, no binding.
func (d *descriptor) sole() bool {
	v := d.state.Load()
	return v&pooledBit != 0 && refsOf(v) == 2 && handlesOf(v) == 2
}

// releasable reports whether a user reference may be given up: the family
// is live and more than the pool's own reference remains. A release that
// would leave only the pool's hold is a stale copy released twice, and is
// refused instead of corrupting the counts.
func releasable(v int64) bool {
	r := refsOf(v)
	return r > 1 || (r == 1 && v&pooledBit == 0)
}

// live reports whether id still names this family and a user reference to
// it may remain.
func (d *descriptor) live(id ID) bool {
	return d != nil && ID(d.id.Load()) == id && releasable(d.state.Load())
}

// take adds a user reference (oneRef or oneHandle) to a live family.
func (d *descriptor) take(delta int64) { d.state.Add(delta) }

// give removes a user reference, refusing a stale one.
func (d *descriptor) give(id ID, delta int64) bool {
	if d == nil {
		return false
	}
	for {
		if ID(d.id.Load()) != id {
			return false
		}
		v := d.state.Load()
		if !releasable(v) {
			return false
		}
		if d.state.CompareAndSwap(v, v-delta) {
			if refsOf(v-delta) == 1 {
				if h := d.hint.Load(); h != nil {
					h.push(d)
				}
			}
			return true
		}
	}
}

// recycler keeps descriptors whose last reference the manager dropped, so the
// steady state of reserve and release allocates nothing, and hands out ids
// from blocks reserved on the process-wide counter. It belongs to one
// manager and is touched only from that manager's goroutine.
type recycler struct {
	free     []*descriptor
	nextID   ID
	blockEnd ID
}

// idBlock ids are taken from the global counter at a time; one atomic add
// per reservation was a tenth of the hot path.
const idBlock = 1024

func (r *recycler) id() ID {
	if r.nextID == r.blockEnd {
		hi := ID(lastID.Add(idBlock))
		r.nextID, r.blockEnd = hi-idBlock+1, hi+1
	}
	id := r.nextID
	r.nextID++
	return id
}

// get returns a descriptor with a fresh id and the given state.
func (r *recycler) get(state int64) *descriptor {
	var d *descriptor
	if n := len(r.free); n > 0 {
		d = r.free[n-1]
		r.free[n-1] = nil
		r.free = r.free[:n-1]
	} else {
		d = new(descriptor)
	}
	d.loc = Location{}
	d.cursor = 0
	d.hint.Store(nil)
	// The id goes first: until the state is set it is 0, which no release
	// accepts, and once it is set a stale copy of an old handle already
	// fails the id check.
	d.id.Store(uint64(r.id()))
	d.state.Store(state)
	return d
}

// drop releases the pool slice's hold, recycling the descriptor if that was
// the last reference.
func (r *recycler) drop(d *descriptor) {
	if d != nil && refsOf(d.state.Add(-poolHold)) == 0 {
		r.put(d)
	}
}

// put recycles a descriptor nobody refers to. Its state is 0, so a stale
// copy of one of its handles can neither release nor resolve it, and get
// replaces the id before the state.
func (r *recycler) put(d *descriptor) { r.free = append(r.free, d) }
