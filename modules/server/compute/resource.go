package compute

import "github.com/cubehip/cubehip/modules/hipsys"

// Check is CubeCL's check: the failure or unsettled claim the first of handles
// carries, nil if all were written. No device work; the stream is not used.
func (s *Server) Check(handles []Binding, _ StreamID) error {
	s.settleQueue()
	return s.streams.EnsureWritten(handles...)
}

// Idle reports whether h, a handle of the caller's with b a view of it, is as good as a
// fresh allocation of its size on its stream, so that a caller that keeps released
// buffers for reuse may keep this one rather than release it (the Python package's cache
// of released arrays). Its bytes are undefined, as a fresh allocation's are; what must
// hold is that nothing about its past can reach its next use:
//
//   - nothing but h refers to the memory (memory.Handle.Sole): no queued command, graph,
//     clone or view, which would go on reading or writing it;
//   - it carries no failure and no claim (a read or launch input would report it);
//   - no write of it is unconfirmed: a later failed stream-wide wait marks every
//     unconfirmed write of its stream, and would mark this buffer in its next life
//     with the failure of work from its last.
//
// No device work and no wait: a buffer whose last write no wait confirmed is not idle,
// however long ago the write ran. Not part of CubeCL, whose handles are freed by Drop.
func (s *Server) Idle(h Handle, b Binding) bool {
	s.settleQueue()
	return h.Sole() && s.streams.EnsureWritten(b) == nil && !s.writePending(b.ID())
}

// Flush is CubeCL's flush on stream id: a drop-queue flush and the deferred frees of
// the device pools, both skipped while the stream records a capture. It blocks on the
// drop queue's previous fence. It returns nil, always, as in CubeCL: failures live on
// buffers, not streams; the drop queue's own trouble is logged.
func (s *Server) Flush(id StreamID) error {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		s.log.Warn("server: flush: no stream", "stream", id, "err", err)
		return nil
	}
	defer r.Close()
	_ = r.Stream().FencePins() // see Sync
	if err := r.Stream().Flush(); err != nil {
		s.log.Warn("server: flush: drop queue", "stream", id, "err", err)
	}
	s.reclaimImports()
	return nil
}

// Resource is a device buffer handed out by GetResource: its address and the size of
// the view, and a binding that keeps the allocation alive until the caller releases it.
type Resource struct {
	Ptr     hipsys.DevicePtr
	Size    uint64
	Binding Binding
}

// Release gives up the resource's hold on the allocation.
func (r *Resource) Release() error { return r.Binding.Release() }

// GetResource is CubeCL's get_resource: the claim check a read makes (a buffer a failed
// launch never filled reports the failure rather than a pointer to whatever was there
// before), a command on stream id with the binding (so the stream waits for its last
// writer), and the device address, which may materialize a dry run's lazy page.
func (s *Server) GetResource(b Binding, id StreamID) (Resource, error) {
	ptr, size, err := s.ResourcePointer(b, id)
	if err != nil {
		return Resource{}, err
	}
	keep, err := b.Clone()
	if err != nil {
		return Resource{}, err
	}
	return Resource{Ptr: ptr, Size: size, Binding: keep}, nil
}

// ResourcePointer is GetResource without the resource's own hold: the same check, the
// same command on stream id, the address and size of the view. For a caller whose own
// handle keeps the allocation for as long as the address is used (a Device's buffer
// handing its pointer to another library), the hold would be one more clone to give back.
func (s *Server) ResourcePointer(b Binding, id StreamID) (hipsys.DevicePtr, uint64, error) {
	s.settleQueue()
	if err := s.streams.EnsureWritten(b); err != nil {
		return 0, 0, err
	}
	s.one[0] = b
	r, err := s.streams.Resolve(id, s.one[:])
	s.one[0] = Binding{}
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	return s.streams.Resource(b)
}
