package memory

import "sync/atomic"

// descriptor is the shared state of one handle family: CubeCL's Arc'd
// {id, location} plus its two reference counts. The pool slice that holds the
// allocation owns one reference of each kind, as CubeCL's slice owns a clone
// of the handle.
//
// id, refs and handles are atomic because users clone and release handles
// from any goroutine; loc and cursor belong to the manager's goroutine.
type descriptor struct {
	id      atomic.Uint64
	refs    atomic.Int32 // pool slice + handles + bindings: is_free
	handles atomic.Int32 // pool slice + handles: can_mut
	// pooled is set while a pool slice holds the family. A release that
	// would leave only the pool's own reference is then a stale copy being
	// released twice, and is refused instead of corrupting the counts.
	pooled atomic.Bool
	loc     Location
	cursor  uint64
}

// free reports CubeCL's is_free: only the pool's own slice still refers to
// the allocation. A nil descriptor is a slice that was never handed out.
func (d *descriptor) free() bool { return d == nil || d.refs.Load() <= 1 }

// recycler keeps descriptors whose last reference the manager dropped, so the
// steady state of reserve and release allocates nothing. It belongs to one
// manager and is touched only from that manager's goroutine.
type recycler struct {
	free []*descriptor
}

// get returns a descriptor with a fresh id and the given counts.
func (r *recycler) get(refs, handles int32) *descriptor {
	var d *descriptor
	if n := len(r.free); n > 0 {
		d = r.free[n-1]
		r.free[n-1] = nil
		r.free = r.free[:n-1]
	} else {
		d = new(descriptor)
	}
	d.refs.Store(refs)
	d.handles.Store(handles)
	d.pooled.Store(false)
	d.loc = Location{}
	d.cursor = 0
	// The id is published last: a stale copy of an old handle compares ids
	// before touching the counts, and must not see the new family's id
	// before its counts are set.
	d.id.Store(uint64(nextID()))
	return d
}

// drop releases the pool slice's reference. The handle count goes first:
// once refs shows the slice free, another goroutine's release may already
// be finished, and the counts must be consistent at that point.
func (r *recycler) drop(d *descriptor) {
	if d == nil {
		return
	}
	d.pooled.Store(false)
	d.handles.Add(-1)
	if d.refs.Add(-1) == 0 {
		r.put(d)
	}
}

// put recycles a descriptor nobody refers to. Zeroing the id first makes
// every stale copy of its handles fail the id check instead of adjusting the
// counts of whichever family reuses it next.
func (r *recycler) put(d *descriptor) {
	d.id.Store(0)
	r.free = append(r.free, d)
}

// releasable reports whether a user reference may be given up: the family
// is live and more than the pool's own reference remains.
func (d *descriptor) releasable(id ID) bool {
	if d == nil || ID(d.id.Load()) != id {
		return false
	}
	r := d.refs.Load()
	return r > 1 || (r == 1 && !d.pooled.Load())
}
