package stream

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
)

// Reserve reserves size bytes of device memory on the stream (CubeCL's Command::reserve).
// A reservation that fails for any reason other than memory.ErrBufferTooBig (no pool can
// ever hold it) is retried once after a full Cleanup: freeing cached pages and the info
// cache's unpinned buffers may make room. The cleanup blocks; during a capture it frees
// nothing (the managers skip it), so the retry is cheap there.
func (s *Stream) Reserve(size uint64) (memory.Handle, error) {
	h, err := s.GPU.Reserve(size)
	if err == nil || errors.Is(err, memory.ErrBufferTooBig) {
		return h, err
	}
	s.m.cfg.log.Warn("stream: device reservation failed; cleaning up and retrying once", "size", size, "err", err)
	_ = s.Cleanup()
	return s.GPU.Reserve(size)
}

// Staging is a pinned host buffer from a stream's pinned pools: the source of an async
// upload or the destination of an async download. It owns its slice until Release; push
// it into the stream's drop queue instead when a queued copy still uses it.
type Staging struct {
	h   memory.Handle
	ptr hipsys.HostPtr
	n   uint64
}

// Ptr is the buffer's address, for async copies. A zero-size buffer has a zero Ptr and
// must not be copied from or to.
func (st *Staging) Ptr() hipsys.HostPtr { return st.ptr }

// Size is the buffer's size in bytes.
func (st *Staging) Size() uint64 { return st.n }

// Bytes views the buffer. The view is valid until Release; a zero-size buffer is an
// empty, non-nil slice, so callers never see the null pointer.
func (st *Staging) Bytes() []byte {
	if st.n == 0 || st.ptr == 0 {
		return []byte{}
	}
	return st.ptr.Bytes(int(st.n))
}

// Release gives the slice back to the pinned pool. The caller must know the device is
// done with it (the drop queue's fence says so).
func (st *Staging) Release() error { return st.h.Release() }

// ReservePinned reserves size bytes of pinned host memory from the stream's pinned pools
// (CubeCL's reserve_pinned). On failure the caller falls back, as reserve_cpu falls back
// to the heap. A reservation that has to grow the pool allocates and synchronizes the
// stream (see PinnedStorage), which invalidates a capture the prepare run did not warm.
func (s *Stream) ReservePinned(size uint64) (*Staging, error) {
	h, err := s.Pinned.Reserve(size)
	if err != nil {
		return nil, err
	}
	res, err := s.Pinned.HandleResource(h)
	if err != nil {
		_ = h.Release()
		return nil, err
	}
	return &Staging{h: h, ptr: hipsys.HostPtr(res.Addr()), n: size}, nil
}

// Resource resolves b to its device address and the size of its view, from the pools of
// b's own stream (which may materialize a dry run's lazy page). It fails with
// memory.ErrNotFound when that stream was never created or the binding is stale.
//
// It reads the owning stream's memory manager: with streams driven concurrently, a
// binding from another stream may be resolved only while that stream's goroutine is not
// using its manager (the server's single owner guarantees it).
func (m *MultiStream) Resource(b Binding) (hipsys.DevicePtr, uint64, error) {
	s := m.TryStream(b.Stream)
	if s == nil {
		return 0, 0, fmt.Errorf("%w: binding %d names stream %d, which has no pools", memory.ErrNotFound, b.ID(), b.Stream)
	}
	res, err := s.GPU.Resource(b.Binding)
	if err != nil {
		return 0, 0, err
	}
	return hipsys.DevicePtr(res.Addr()), res.Size, nil
}
