package compute

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// Module variables: the `__constant__` and `__device__` variables of a kernel's module
// (filter masks, lookup tables, counters), which the host reads and writes by name.
// A variable is not a buffer: no failure is carried by it and no other stream is made
// to wait for its writes, so work on another stream that reads it must be ordered after
// the write by the caller (a Sync of the writing stream, or the write queued on the
// stream that launches).

// Global is the address and size of the module variable name of kernel k's module
// (every kernel of one source and options shares it; ModuleOf names a module without a
// kernel), which is compiled and loaded first if it was not. An unknown name wraps the
// platform's hipErrorNotFound and names the variable and the kernel.
func (s *Server) Global(k *Kernel, name string) (hipsys.DevicePtr, uint64, error) {
	if k == nil {
		return 0, 0, fmt.Errorf("%w: nil kernel", ErrInvalidArgument)
	}
	if name == "" {
		return 0, 0, fmt.Errorf("%w: empty module variable name (%s)", ErrInvalidArgument, k.what())
	}
	lm, err := s.kernels.module(k)
	if err != nil {
		return 0, 0, err
	}
	ptr, size, err := s.p.ModuleGetGlobal(lm.mod, name)
	if err != nil {
		return 0, 0, fmt.Errorf("%s has no module variable %q: %w", k.what(), name, err)
	}
	return ptr, size, nil
}

// sizedGlobal is Global, refusing a copy of n bytes unless n is the variable's size: a
// shorter write would leave part of it stale, a longer one reach past it into whatever
// the module placed next.
func (s *Server) sizedGlobal(k *Kernel, name string, n int, what string) (hipsys.DevicePtr, error) {
	ptr, size, err := s.Global(k, name)
	if err != nil {
		return 0, err
	}
	if uint64(n) != size {
		return 0, fmt.Errorf("%w: %s of module variable %q of %s: %d bytes, the variable has %d",
			ErrInvalidArgument, what, name, k.what(), n, size)
	}
	return ptr, nil
}

// WriteGlobal copies data into the module variable name of kernel k, queued on stream
// id after the work already queued there (so the stream's next launch sees it); data
// must be exactly the variable's size and may be reused at once. The bytes are staged in
// pinned memory that the stream releases once the copy has run; inside a capture
// window the graph keeps them, so each replay writes the bytes the recording saw. With
// no pinned memory left, the copy is a blocking one after the stream's queued work.
func (s *Server) WriteGlobal(k *Kernel, name string, data []byte, id StreamID) error {
	const what = "write"
	ptr, err := s.sizedGlobal(k, name, len(data), what)
	if err != nil || len(data) == 0 {
		return err
	}
	s.settleQueue() // the launches the queue holds go first: they come before on the stream
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	st := r.Stream()
	n := uint64(len(data))
	staged, err := st.ReservePinned(n)
	if err != nil {
		if st.Capture.IsRecording() {
			return s.explain(fmt.Errorf("%w for a %d-byte module variable write: %w", ErrNoPinnedMemory, n, err))
		}
		if err := s.p.StreamSynchronize(st.Sys); err != nil {
			return fmt.Errorf("compute: write of module variable %q: %w", name, err)
		}
		if err := s.p.MemcpyHtoD(ptr, data); err != nil {
			return fmt.Errorf("compute: write of module variable %q: %w", name, err)
		}
		return nil
	}
	copy(staged.Bytes(), data)
	// SAFETY: staged is pinned memory owned by this copy until the drop queue releases
	// it, after a fence recorded behind the copy has completed.
	if err := s.p.MemcpyHtoDAsync(ptr, staged.Ptr(), n, st.Sys); err != nil {
		_ = staged.Release() // nothing was queued that reads it
		return fmt.Errorf("compute: write of module variable %q: %w", name, err)
	}
	if ferr := st.Drop(staged, n, false); ferr != nil {
		s.log.Warn("compute: drop-queue flush failed", "err", ferr)
	}
	return nil
}

// ReadGlobal copies the module variable name of kernel k into dst, which must be
// exactly the variable's size, after the work queued so far on stream id; it waits for
// that work. A recording stream refuses it: its work has not run.
func (s *Server) ReadGlobal(k *Kernel, name string, dst []byte, id StreamID) error {
	ptr, err := s.sizedGlobal(k, name, len(dst), "read")
	if err != nil || len(dst) == 0 {
		return err
	}
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	st := r.Stream()
	if st.Capture.IsRecording() {
		return fmt.Errorf("%w: read of module variable %q while stream %d records a graph", stream.ErrGraphState, name, id)
	}
	if err := s.p.StreamSynchronize(st.Sys); err != nil {
		return fmt.Errorf("compute: read of module variable %q: %w", name, err)
	}
	if err := s.p.MemcpyDtoH(dst, ptr); err != nil {
		return fmt.Errorf("compute: read of module variable %q: %w", name, err)
	}
	return nil
}
