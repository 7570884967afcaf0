package stream

import (
	"fmt"
	"log/slog"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// DeviceStorage is memory.Storage over device memory (hipMalloc). Allocation is
// synchronous hipMalloc, deliberately not the stream-ordered pool: ROCm's async pool
// keeps its high-water mark and never gives memory back to the system. Frees are queued
// and run on Flush, because hipFree synchronizes the device.
//
// It belongs to one stream's memory manager and is used from that stream's goroutine
// only.
type DeviceStorage struct {
	capture *Capture // its stream's: an allocation while it records is refused
	p       hipsys.Platform
	log     *slog.Logger
	next    memory.StorageID
	ptrs    map[memory.StorageID]hipsys.DevicePtr
	pending []hipsys.DevicePtr
}

// NewDeviceStorage returns an empty device storage on p's current device.
func NewDeviceStorage(p hipsys.Platform, log *slog.Logger) *DeviceStorage {
	if log == nil {
		log = slog.Default()
	}
	return &DeviceStorage{p: p, log: log, ptrs: make(map[memory.StorageID]hipsys.DevicePtr)}
}

// Alloc allocates size bytes of device memory. Size 0 succeeds with a null pointer, as
// hipMalloc does. Failure is the platform's *hipsys.Error (hipErrorOutOfMemory when the
// device is full), wrapped.
func (s *DeviceStorage) Alloc(size uint64) (memory.StorageHandle, error) {
	if err := s.capture.refuseAlloc("device", size); err != nil {
		return memory.StorageHandle{}, err
	}
	ptr, err := s.p.Malloc(size)
	if err != nil {
		return memory.StorageHandle{}, fmt.Errorf("stream: device allocation of %d bytes: %w", size, err)
	}
	s.next++
	s.ptrs[s.next] = ptr
	return memory.StorageHandle{ID: s.next, Size: size}, nil
}

// Dealloc forgets id at once and queues its hipFree for the next Flush.
func (s *DeviceStorage) Dealloc(id memory.StorageID) {
	ptr, ok := s.ptrs[id]
	if !ok {
		return
	}
	delete(s.ptrs, id)
	if ptr != 0 {
		s.pending = append(s.pending, ptr)
	}
}

// Flush runs the queued frees. Each hipFree synchronizes the device, so this blocks; a
// failed free is logged and dropped (the memory is lost, nothing else is affected). The
// managers never flush while a capture is open.
func (s *DeviceStorage) Flush() {
	for i, ptr := range s.pending {
		if err := s.p.Free(ptr); err != nil {
			s.log.Warn("stream: deferred hipFree failed; the allocation is leaked", "err", err)
		}
		s.pending[i] = 0
	}
	s.pending = s.pending[:0]
}

// FreeAll frees every allocation the storage still holds, whatever uses it, with the
// frees already queued: the end of its stream, when nothing will run on the memory
// again. Failures are logged; the storage is empty afterwards.
func (s *DeviceStorage) FreeAll() {
	for id, ptr := range s.ptrs {
		if ptr != 0 {
			s.pending = append(s.pending, ptr)
		}
		delete(s.ptrs, id)
	}
	s.Flush()
}

// Pending is the number of frees waiting for Flush.
func (s *DeviceStorage) Pending() int { return len(s.pending) }

// Resource resolves h to its device address range. An unknown id (already deallocated)
// is an error wrapping memory.ErrNotFound, CubeCL's StorageHandleNotFound.
func (s *DeviceStorage) Resource(h memory.StorageHandle) (memory.Resource, error) {
	ptr, ok := s.ptrs[h.ID]
	if !ok {
		return memory.Resource{}, fmt.Errorf("%w: device storage %d (storage handle not found)", memory.ErrNotFound, h.ID)
	}
	return memory.Resource{Base: uintptr(ptr), Offset: h.Offset, Size: h.Size}, nil
}

// PinnedAlignment is the alignment of pinned host slices.
const PinnedAlignment = 16

// PinnedStorage is memory.Storage over pinned host memory (hipHostMalloc, mapped), the
// staging memory of every async copy. Frees are immediate: hipFreeHost does not wait on
// the device the way hipFree does, and the drop queue already held each buffer until the
// device finished with it.
//
// It belongs to one stream's pinned memory manager and is used from that stream's
// goroutine only.
type PinnedStorage struct {
	capture *Capture // its stream's: an allocation while it records is refused
	p       hipsys.Platform
	stream  hipsys.Stream
	log     *slog.Logger
	next    memory.StorageID
	ptrs    map[memory.StorageID]hipsys.HostPtr
}

// NewPinnedStorage returns an empty pinned storage owned by stream.
func NewPinnedStorage(p hipsys.Platform, stream hipsys.Stream, log *slog.Logger) *PinnedStorage {
	if log == nil {
		log = slog.Default()
	}
	return &PinnedStorage{p: p, stream: stream, log: log, ptrs: make(map[memory.StorageID]hipsys.HostPtr)}
}

// Alloc allocates size bytes of mapped pinned memory and then synchronizes the owning
// stream, as CubeCL does: that host wait is illegal mid-capture, which is why the pinned
// manager is armed for capture along with the device one (the warm-up allocates every
// staging buffer the recorded run needs).
func (s *PinnedStorage) Alloc(size uint64) (memory.StorageHandle, error) {
	if err := s.capture.refuseAlloc("pinned", size); err != nil {
		return memory.StorageHandle{}, err
	}
	var ptr hipsys.HostPtr
	if size > 0 {
		var err error
		ptr, err = s.p.HostMalloc(size, hipsys.HostMallocMapped)
		if err != nil {
			return memory.StorageHandle{}, fmt.Errorf("stream: pinned allocation of %d bytes: %w", size, err)
		}
		if err := s.p.StreamSynchronize(s.stream); err != nil {
			_ = s.p.HostFree(ptr)
			return memory.StorageHandle{}, fmt.Errorf("stream: pinned allocation of %d bytes: %w", size, err)
		}
	}
	s.next++
	s.ptrs[s.next] = ptr
	return memory.StorageHandle{ID: s.next, Size: size}, nil
}

// Dealloc frees id at once.
func (s *PinnedStorage) Dealloc(id memory.StorageID) {
	ptr, ok := s.ptrs[id]
	if !ok {
		return
	}
	delete(s.ptrs, id)
	if ptr == 0 {
		return
	}
	if err := s.p.HostFree(ptr); err != nil {
		s.log.Warn("stream: hipFreeHost failed; the allocation is leaked", "err", err)
	}
}

// FreeAll frees every allocation the storage still holds, whatever uses it: the end of
// its stream, when no copy will touch the memory again. Failures are logged.
func (s *PinnedStorage) FreeAll() {
	for id := range s.ptrs {
		s.Dealloc(id)
	}
}

// Flush does nothing: pinned frees are immediate.
func (s *PinnedStorage) Flush() {}

// Resource resolves h to its host address range. A zero-size allocation has a zero
// Base; a caller viewing it as bytes must use an empty slice, never the null pointer.
func (s *PinnedStorage) Resource(h memory.StorageHandle) (memory.Resource, error) {
	ptr, ok := s.ptrs[h.ID]
	if !ok {
		return memory.Resource{}, fmt.Errorf("%w: pinned storage %d (storage handle not found)", memory.ErrNotFound, h.ID)
	}
	return memory.Resource{Base: uintptr(ptr), Offset: h.Offset, Size: h.Size}, nil
}

var (
	_ memory.Storage = (*DeviceStorage)(nil)
	_ memory.Storage = (*PinnedStorage)(nil)
)
