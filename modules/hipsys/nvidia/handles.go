package nvidia

import (
	"sort"
	"sync"
	"sync/atomic"
)

// handles is the set of live driver handles of one kind. The handle a caller holds is
// the driver's own pointer (a CUstream is a hipsys.Stream), so a valid call converts
// nothing; the set exists because the driver dereferences what it is given, and a stale
// or invented handle would crash the process instead of returning
// hipErrorInvalidHandle. A typed map under a read-write lock, not a sync.Map, whose
// boxed keys cost more per lookup; the handles every launch checks (functions, streams,
// graph execs) use hotHandles instead.
type handles[V any] struct {
	mu sync.RWMutex
	m  map[uintptr]V
}

func (h *handles[V]) put(k uintptr, v V) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uintptr]V{}
	}
	h.m[k] = v
}

func (h *handles[V]) get(k uintptr) (V, bool) {
	h.mu.RLock()
	v, ok := h.m[k]
	h.mu.RUnlock()
	return v, ok
}

func (h *handles[V]) has(k uintptr) bool {
	h.mu.RLock()
	_, ok := h.m[k]
	h.mu.RUnlock()
	return ok
}

// take removes the handle and reports whether it was live, so of two concurrent
// destroys exactly one reaches the driver.
func (h *handles[V]) take(k uintptr) (V, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[k]
	delete(h.m, k)
	return v, ok
}

// hotHandles is handles for the kinds checked on every launch and replay: lookups read
// an immutable snapshot through one atomic load, with no lock word for cores to contend
// on; put and take copy the map, which suits kinds created a few at a time (streams,
// functions, executable graphs), not ones created per operation.
//
// Each snapshot also remembers the last handle has found in it, so a loop of launches of
// one kernel on one stream checks each handle against one word, not a map: after a
// driver call has evicted the caches, a map lookup is several cache misses. The memo
// lives in the snapshot, not beside it, because a take replaces the snapshot: a lookup
// that read the old one just before can only write its memo there, where no later
// lookup reads it, so a destroyed handle is never remembered as live. It is a key only,
// a plain word: a memo holding the value too would allocate whenever kernels alternate.
type hotHandles[V any] struct {
	mu sync.Mutex // serializes writers
	s  atomic.Pointer[snapshot[V]]
}

type snapshot[V any] struct {
	m    map[uintptr]V
	last atomic.Uintptr // the handle has last found; 0 (no driver handle) at first
}

func (h *hotHandles[V]) get(k uintptr) (V, bool) {
	if s := h.s.Load(); s != nil {
		v, ok := s.m[k]
		return v, ok
	}
	var zero V
	return zero, false
}

func (h *hotHandles[V]) has(k uintptr) bool {
	s := h.s.Load()
	if s == nil || k == 0 {
		return false
	}
	if s.last.Load() == k {
		return true
	}
	if _, ok := s.m[k]; !ok {
		return false
	}
	s.last.Store(k)
	return true
}

func (h *hotHandles[V]) put(k uintptr, v V) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := h.clone(1)
	next[k] = v
	h.s.Store(&snapshot[V]{m: next})
}

func (h *hotHandles[V]) take(k uintptr) (V, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var v V
	s := h.s.Load()
	if s == nil {
		return v, false
	}
	v, ok := s.m[k]
	if ok {
		next := h.clone(0)
		delete(next, k)
		h.s.Store(&snapshot[V]{m: next})
	}
	return v, ok
}

func (h *hotHandles[V]) clone(extra int) map[uintptr]V {
	old := h.s.Load()
	if old == nil {
		return make(map[uintptr]V, extra)
	}
	next := make(map[uintptr]V, len(old.m)+extra)
	for k, v := range old.m {
		next[k] = v
	}
	return next
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
