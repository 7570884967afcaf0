package cpu

import (
	"sync"
	"sync/atomic"
)

// nextHandle numbers every handle the platform gives out, of every kind, from one
// counter: a stream handle passed where an event is expected is then simply unknown
// (hipErrorInvalidHandle) rather than some other object, and a destroyed handle is
// never reused, so a stale one stays invalid. It starts well away from small integers so
// that 0, 1 or a truncated value is never mistaken for a live handle.
var nextHandle atomic.Uintptr

const handleBase = 0x1000_0000

// handles maps one kind of handle to its object. Lookups take a read lock only: the
// launch path looks up a function and a stream on every call.
type handles[T any] struct {
	mu sync.RWMutex
	m  map[uintptr]*T
}

func (h *handles[T]) add(v *T) uintptr {
	id := handleBase + nextHandle.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uintptr]*T{}
	}
	h.m[id] = v
	return id
}

// get is the object of id, or nil when id is unknown or destroyed.
func (h *handles[T]) get(id uintptr) *T {
	h.mu.RLock()
	v := h.m[id]
	h.mu.RUnlock()
	return v
}

// remove forgets id and returns what it named (nil when unknown).
func (h *handles[T]) remove(id uintptr) *T {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.m[id]
	delete(h.m, id)
	return v
}

// all is a snapshot of the live objects.
func (h *handles[T]) all() []*T {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]*T, 0, len(h.m))
	for _, v := range h.m {
		out = append(out, v)
	}
	return out
}

// len is the number of live handles (tests check for leaks with it).
func (h *handles[T]) len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.m)
}
