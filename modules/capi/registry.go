package main

import (
	"sync"
	"sync/atomic"
)

// kind tags a handle's id with what it names, so a buffer's id handed to a kernel call is
// an invalid handle rather than a buffer read as a kernel.
type kind uint8

const (
	kindDevice kind = iota + 1
	kindBuffer
	kindKernel
	kindGraph
	kindProfile
	kindModule
)

func (k kind) String() string {
	switch k {
	case kindDevice:
		return "device"
	case kindBuffer:
		return "buffer"
	case kindKernel:
		return "kernel"
	case kindGraph:
		return "graph"
	case kindProfile:
		return "profile"
	case kindModule:
		return "module"
	}
	return "handle"
}

// A handle's id: kind in the top byte, the slot's generation in the next 24 bits, the
// slot's index in the low 32. The kind is never 0, so the zero handle is never valid.
// The generation changes each time a slot is reused, so a released handle does not come
// back to life when its slot holds a new object; it wraps after 2^24 reuses of one slot,
// the one way a very old id could name a live object of the same kind.
const (
	genBits  = 24
	genMask  = 1<<genBits - 1
	slotBits = 32
)

func makeID(k kind, gen uint32, idx uint32) uint64 {
	return uint64(k)<<56 | uint64(gen&genMask)<<slotBits | uint64(idx)
}

// slot is one live object. Stored behind an atomic pointer so that a lookup, which every
// call makes (a launch one per buffer argument), takes no lock.
type slot struct {
	id  uint64
	obj any
}

const chunkBits = 12 // 4096 slots a chunk

type chunk [1 << chunkBits]atomic.Pointer[slot]

// registry maps ids to objects. Lookups are lock-free; adding and removing take mu. Chunks
// are never freed or moved, so a lookup that raced with growth reads a valid chunk list.
type registry struct {
	chunks atomic.Pointer[[]*chunk]

	mu   sync.Mutex
	gens []uint32 // each slot's current generation
	free []uint32 // slots to reuse, most recently freed last
	last uint64   // the id add gave out last (for tests that learn the handles they make)
}

var handles registry

// add registers obj and returns its id.
func (r *registry) add(k kind, obj any) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var idx uint32
	if n := len(r.free); n > 0 {
		idx = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		idx = uint32(len(r.gens))
		r.gens = append(r.gens, 0)
		r.grow(idx)
	}
	r.gens[idx] = (r.gens[idx] + 1) & genMask
	id := makeID(k, r.gens[idx], idx)
	r.at(idx).Store(&slot{id: id, obj: obj})
	r.last = id
	return id
}

// grow makes sure the chunk holding idx exists; mu is held.
func (r *registry) grow(idx uint32) {
	cur := r.chunks.Load()
	var list []*chunk
	if cur != nil {
		list = *cur
	}
	if int(idx>>chunkBits) < len(list) {
		return
	}
	next := append(append([]*chunk(nil), list...), new(chunk))
	r.chunks.Store(&next)
}

func (r *registry) at(idx uint32) *atomic.Pointer[slot] {
	list := *r.chunks.Load()
	return &list[idx>>chunkBits][idx&(1<<chunkBits-1)]
}

// get returns the object id names, or false for an id that names nothing live of kind k.
func (r *registry) get(id uint64, k kind) (any, bool) {
	if kind(id>>56) != k {
		return nil, false
	}
	idx := uint32(id)
	cur := r.chunks.Load()
	if cur == nil || int(idx>>chunkBits) >= len(*cur) {
		return nil, false
	}
	s := (*cur)[idx>>chunkBits][idx&(1<<chunkBits-1)].Load()
	if s == nil || s.id != id {
		return nil, false
	}
	return s.obj, true
}

// remove unregisters id and returns its object; false if it named nothing live of kind
// k (a second release, for example). Only one of several racing removes wins.
func (r *registry) remove(id uint64, k kind) (any, bool) {
	if kind(id>>56) != k {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	idx := uint32(id)
	if int(idx) >= len(r.gens) {
		return nil, false
	}
	p := r.at(idx)
	s := p.Load()
	if s == nil || s.id != id {
		return nil, false
	}
	p.Store(nil)
	r.free = append(r.free, idx)
	return s.obj, true
}

// each calls fn with every live object and its id until fn returns false, without a lock: an object
// added or removed meanwhile may or may not be seen.
func (r *registry) each(fn func(id uint64, obj any) bool) {
	cur := r.chunks.Load()
	if cur == nil {
		return
	}
	for _, c := range *cur {
		for i := range c {
			if s := c[i].Load(); s != nil && !fn(s.id, s.obj) {
				return
			}
		}
	}
}

// removeIf unregisters every live object for which drop is true (a closed device's
// buffers, kernels, graphs and profiles) and returns how many.
func (r *registry) removeIf(drop func(obj any) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for idx := range r.gens {
		p := r.at(uint32(idx))
		if s := p.Load(); s != nil && drop(s.obj) {
			p.Store(nil)
			r.free = append(r.free, uint32(idx))
			n++
		}
	}
	return n
}
