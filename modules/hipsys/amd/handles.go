package amd

import "sync"

// handles is the set of live HIP handles of one kind (streams, events, modules, ...).
// ROCm dereferences whatever hipStream_t it is given, so an invented or already
// destroyed handle would crash the process; checking it here first turns that into
// hipErrorInvalidHandle, as the Platform contract requires. Each handle may record an
// owner (a function's module, a node's graph), so unloading the owner retires them too.
type handles struct {
	mu sync.RWMutex
	m  map[uintptr]uintptr // handle → owner (0 when none)
}

func newHandles() *handles { return &handles{m: map[uintptr]uintptr{}} }

func (h *handles) add(v, owner uintptr) {
	h.mu.Lock()
	h.m[v] = owner
	h.mu.Unlock()
}

func (h *handles) has(v uintptr) bool {
	h.mu.RLock()
	_, ok := h.m[v]
	h.mu.RUnlock()
	return ok
}

// remove reports whether v was live, so that of two racing destroys only one reaches HIP.
func (h *handles) remove(v uintptr) bool {
	_, ok := h.take(v)
	return ok
}

// take removes v and returns its owner.
func (h *handles) take(v uintptr) (owner uintptr, ok bool) {
	h.mu.Lock()
	owner, ok = h.m[v]
	delete(h.m, v)
	h.mu.Unlock()
	return owner, ok
}

// removeOwned retires every handle owned by owner.
func (h *handles) removeOwned(owner uintptr) {
	h.mu.Lock()
	for v, o := range h.m {
		if o == owner {
			delete(h.m, v)
		}
	}
	h.mu.Unlock()
}

func (h *handles) len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.m)
}
