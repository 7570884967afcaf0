package nvidia

import (
	"sort"
	"sync"
)

// handles is the set of live driver handles of one kind. The handle a caller holds is
// the driver's own pointer (a CUstream is a hipsys.Stream), so a valid call converts
// nothing; the set exists because the driver dereferences what it is given, and a stale
// or invented handle would crash the process instead of returning
// hipErrorInvalidHandle. A sync.Map, because lookups (every launch checks its function
// and stream) vastly outnumber creations and never contend on a lock.
type handles[V any] struct{ m sync.Map }

func (h *handles[V]) put(k uintptr, v V) { h.m.Store(k, v) }

func (h *handles[V]) get(k uintptr) (V, bool) {
	v, ok := h.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (h *handles[V]) has(k uintptr) bool {
	_, ok := h.m.Load(k)
	return ok
}

// take removes the handle and reports whether it was live, so of two concurrent
// destroys exactly one reaches the driver.
func (h *handles[V]) take(k uintptr) (V, bool) {
	v, ok := h.m.LoadAndDelete(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// ranges is the set of live pinned host allocations, so an async copy's host side can
// be checked to lie inside one: the driver reads host addresses blindly, and a bad one
// is a segfault rather than a status.
type ranges struct {
	mu   sync.RWMutex
	list []hostRange // sorted by base, disjoint
}

type hostRange struct{ base, size uintptr }

func (r *ranges) add(base, size uintptr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.list), func(i int) bool { return r.list[i].base >= base })
	r.list = append(r.list, hostRange{})
	copy(r.list[i+1:], r.list[i:])
	r.list[i] = hostRange{base, size}
}

// remove drops the allocation starting exactly at base; false if there is none.
func (r *ranges) remove(base uintptr) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.list), func(i int) bool { return r.list[i].base >= base })
	if i == len(r.list) || r.list[i].base != base {
		return false
	}
	r.list = append(r.list[:i], r.list[i+1:]...)
	return true
}

// contains reports whether [p, p+n) lies inside one allocation.
func (r *ranges) contains(p, n uintptr) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	// The last allocation starting at or before p is the only one that can hold it.
	i := sort.Search(len(r.list), func(i int) bool { return r.list[i].base > p }) - 1
	if i < 0 {
		return false
	}
	a := r.list[i]
	return p+n >= p && p+n <= a.base+a.size
}
