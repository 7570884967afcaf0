// Package memorytest provides a fake [memory.Storage] for tests of the
// memory package and of the modules above it. It allocates no real memory:
// each allocation gets a distinct, aligned fake address range, which is
// enough to check that live slices never overlap.
package memorytest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cubehip/cubehip/modules/memory"
)

// ErrUnknown is returned for a storage id the fake never issued or already
// freed.
var ErrUnknown = errors.New("memorytest: unknown storage id")

// ErrInjected is what FailAlloc's failures return by default.
var ErrInjected = errors.New("memorytest: injected allocation failure")

// Storage is a fake storage. Frees are deferred until Flush, like the GPU
// storage's. It is safe for concurrent use, although a manager calls it
// from one goroutine.
type Storage struct {
	mu      sync.Mutex
	next    memory.StorageID
	addr    uintptr
	live    map[memory.StorageID]alloc
	pending []memory.StorageID

	// FailAlloc, when set, is asked before each allocation; a non-nil
	// error fails it.
	FailAlloc func(size uint64) error

	Allocs, Deallocs, Flushes int
}

type alloc struct {
	base uintptr
	size uint64
}

// gap keeps fake allocations apart and aligned to anything a test uses.
const gap = 1 << 16

// New returns an empty fake storage.
func New() *Storage {
	return &Storage{addr: 1 << 32, live: make(map[memory.StorageID]alloc)}
}

func (s *Storage) Alloc(size uint64) (memory.StorageHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailAlloc != nil {
		if err := s.FailAlloc(size); err != nil {
			return memory.StorageHandle{}, err
		}
	}
	s.next++
	s.Allocs++
	a := alloc{base: s.addr, size: size}
	if size == 0 {
		a.base = 0 // as hipMalloc(0) gives a null pointer
	}
	s.addr += uintptr((size + gap) / gap * gap)
	s.live[s.next] = a
	return memory.StorageHandle{ID: s.next, Size: size}, nil
}

func (s *Storage) Dealloc(id memory.StorageID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, id)
}

func (s *Storage) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Flushes++
	for _, id := range s.pending {
		if _, ok := s.live[id]; ok {
			delete(s.live, id)
			s.Deallocs++
		}
	}
	s.pending = s.pending[:0]
}

func (s *Storage) Resource(h memory.StorageHandle) (memory.Resource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.live[h.ID]
	if !ok {
		return memory.Resource{}, fmt.Errorf("%w: %d", ErrUnknown, h.ID)
	}
	if h.Offset+h.Size > a.size {
		return memory.Resource{}, fmt.Errorf("memorytest: range %d+%d outside allocation %d of %d bytes",
			h.Offset, h.Size, h.ID, a.size)
	}
	return memory.Resource{Base: a.base, Offset: h.Offset, Size: h.Size}, nil
}

// Live returns the number of allocations not yet freed by a flush.
func (s *Storage) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// LiveBytes returns the bytes of allocations not yet freed by a flush.
func (s *Storage) LiveBytes() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n uint64
	for _, a := range s.live {
		n += a.size
	}
	return n
}

// Pending returns the number of frees waiting for Flush.
func (s *Storage) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}
