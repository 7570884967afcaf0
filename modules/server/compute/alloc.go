package compute

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/memory"
)

// NewHandle returns a fresh, unbound handle of size bytes homed on stream id: the client
// side of CubeCL's reserve-then-bind protocol. It has no memory until InitializeMemory.
// It creates the stream if needed, which is its only failure.
func (s *Server) NewHandle(size uint64, id StreamID) (Handle, error) {
	s.settleQueue()
	st, err := s.streams.Stream(id)
	if err != nil {
		return Handle{}, err
	}
	return Handle{Handle: st.GPU.NewHandle(size), Stream: id}, nil
}

// InitializeMemory is CubeCL's initialize_memory: reserve size bytes of device memory
// on stream id (retrying once after a full cleanup, see stream.Stream.Reserve) and bind
// the reservation to h, which NewHandle made on the same stream. The slice is stamped
// with the command's cursor. Under a dry run the page may be recorded without device
// memory, mapped on first use.
//
// Differs from CubeCL: CubeCL aborts the device thread when the
// reservation or the bind fails ("fatal rather than reported", since nothing has a
// binding to carry a failure yet). The failure is returned instead, to the caller that is
// allocating, who is the one party that can do something about it; h stays unbound, and
// any use of it fails with memory.ErrNotFound.
func (s *Server) InitializeMemory(h Handle, size uint64, id StreamID) error {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	st := r.Stream()
	if s.streams.TryStream(h.Stream) != st {
		return fmt.Errorf("%w: handle of stream %d initialized on stream %d", ErrInvalidArgument, h.Stream, id)
	}
	reserved, err := st.Reserve(size)
	if err != nil {
		return fmt.Errorf("server: failed to reserve %d bytes of device memory: %w", size, err)
	}
	if err := st.Bind(&reserved, h.Handle); err != nil {
		_ = reserved.Release()
		return fmt.Errorf("server: failed to bind %d bytes of device memory: %w", size, err)
	}
	return nil
}

// Empty is NewHandle and InitializeMemory: a new allocation of size bytes on stream id,
// contents undefined. On failure nothing is left allocated.
func (s *Server) Empty(size uint64, id StreamID) (Handle, error) {
	h, err := s.NewHandle(size, id)
	if err != nil {
		return Handle{}, err
	}
	if err := s.InitializeMemory(h, size, id); err != nil {
		_ = h.Release()
		return Handle{}, err
	}
	return h, nil
}

// MemoryUsage is the usage of stream id's device pools (the pinned pools are not
// included, as in CubeCL). The only failure is a stream that cannot be created.
func (s *Server) MemoryUsage(id StreamID) (memory.Usage, error) {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return memory.Usage{}, err
	}
	defer r.Close()
	return r.Stream().GPU.Usage(), nil
}

// MemoryReport is the per-pool report of stream id's device pools.
func (s *Server) MemoryReport(id StreamID) (memory.Report, error) {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return memory.Report{}, err
	}
	defer r.Close()
	return r.Stream().GPU.Report(), nil
}

// MemoryCleanup is memory_cleanup on stream id: unless it records a capture, two
// drop-queue flushes and the info cache's unpinned entries dropped; then the explicit
// cleanup of both managers (no-ops during a capture). It blocks on the drop queue's
// fences. Its error concerns the drop queue only.
func (s *Server) MemoryCleanup(id StreamID) error {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	// Every stream's borrowings still waiting for a fence get it, or go back at once
	// where their stream has nothing left to run: some may be of this stream's memory,
	// which the cleanup then finds free, or a later one once that work is done. The
	// Device waits for them first (SettleBorrowings), outside its lock.
	s.streams.FenceBorrowings()
	err = r.Stream().Cleanup()
	s.reclaimImports()
	return err
}

// AllocationMode opens (memory.ModePersistent) or closes (memory.ModeAuto) a persistent
// window on stream id's device pools; windows nest (see memory.Manager.SetMode).
func (s *Server) AllocationMode(mode memory.Mode, id StreamID) error {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	r.Stream().GPU.SetMode(mode)
	return nil
}

// InstallMemoryPools sets the device pool layout: streams created from now on get it,
// and stream id's pools are rebuilt in place after an explicit cleanup, unless something
// is still live in them (memory.ErrPoolsInUse; the old layout stays). Already-created
// other streams keep theirs: memory is per stream.
//
// Differs from CubeCL: an invalid layout (which CubeCL's client rejects with a panic) is
// memory.ErrInvalidLayout, and changes nothing anywhere.
func (s *Server) InstallMemoryPools(l memory.Layout, id StreamID) error {
	s.settleQueue()
	_, props := s.streams.GPULayout()
	if _, err := l.Resolve(props); err != nil {
		return err
	}
	s.streams.SetGPULayout(l)
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Stream().GPU.InstallLayout(l)
}

// Free releases h, the owning reference a caller was handed, once the launch queue is
// settled: a refusal of a queued launch that wrote h lands on h while it is still live,
// so that anything still holding the allocation (a graph, a queued command) sees it.
// The release of an imported buffer's last reference starts its release (Import).
func (s *Server) Free(h *Handle) error {
	s.settleQueue()
	err := h.Release()
	s.reclaim(&s.callerReleases)
	return err
}

// CallerReleases hands over the releases of imports made with onCaller that Free found
// unused: the caller runs each once, after it has let go of every lock a release may
// take (the owner's above all: a release may call back into the server).
func (s *Server) CallerReleases() []func() {
	r := s.callerReleases
	s.callerReleases = nil
	return r
}
