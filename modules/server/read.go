package server

import (
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// HostBuffer is a host buffer from Staging: pinned memory from the stream's pinned pools
// when it could be had, else ordinary heap memory (CubeCL's reserve_cpu). Release a
// pinned one once no queued copy uses it.
type HostBuffer struct {
	pinned *stream.Staging
	heap   []byte
}

// Bytes views the buffer; valid until Release. Never nil.
func (b *HostBuffer) Bytes() []byte {
	if b.pinned != nil {
		return b.pinned.Bytes()
	}
	if b.heap == nil {
		return []byte{}
	}
	return b.heap
}

// Pinned reports whether the buffer is pinned (an async copy may use it).
func (b *HostBuffer) Pinned() bool { return b.pinned != nil }

// Release gives a pinned buffer back to its pool; a heap buffer is left to the garbage
// collector. Safe from any goroutine; a second Release does nothing.
func (b *HostBuffer) Release() error {
	if b.pinned == nil {
		b.heap = nil
		return nil
	}
	err := b.pinned.Release()
	b.pinned = nil
	return err
}

// reserveHost is reserve_cpu: pinned first, zeroed heap memory when that fails.
func reserveHost(st *stream.Stream, size uint64) *HostBuffer {
	if pb, err := st.ReservePinned(size); err == nil {
		return &HostBuffer{pinned: pb}
	}
	return &HostBuffer{heap: make([]byte, size)}
}

// Staging is the seed's staging: one host buffer per size from stream id's pinned pools,
// each falling back to the heap when pinned memory runs out. Its only failure is a stream
// that cannot be created. The caller releases each buffer.
func (s *Server) Staging(sizes []uint64, id StreamID) ([]*HostBuffer, error) {
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]*HostBuffer, len(sizes))
	for i, n := range sizes {
		out[i] = reserveHost(r.Stream(), n)
	}
	return out, nil
}

// ReadFuture is an enqueued read. Wait blocks until the copies are done and returns the
// bytes. It may be called from any goroutine, exactly once (it releases the staging).
type ReadFuture struct {
	err   error // the claim check's, or the enqueue's
	fence stream.Fence
	bufs  []*HostBuffer
}

// Wait waits for the fence and returns one dense byte slice per descriptor: the fence's
// failure first (a device fault the copies ran into), else the enqueue's, else the bytes.
func (f *ReadFuture) Wait() ([][]byte, error) {
	ferr := f.fence.Wait()
	defer func() {
		for _, b := range f.bufs {
			_ = b.Release()
		}
		f.bufs = nil
	}()
	if ferr != nil {
		return nil, ferr
	}
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]byte, len(f.bufs))
	for i, b := range f.bufs {
		out[i] = append([]byte{}, b.Bytes()...)
	}
	return out, nil
}

// Read is the seed's read on stream id: the claim check (bytes are only as good as the
// work that wrote them: a buffer carrying a failure returns it and nothing is enqueued),
// then for each descriptor in order a pinned host buffer of its dense size and an async
// copy (pitched when the strides say so; zero bytes copy nothing). The first descriptor
// that fails stops the loop; a fence is recorded on the stream whatever happened, and
// the future reports it.
//
// The caller keeps ownership of the bindings and may release them as soon as Read
// returns: the copies are ordered before any later reuse of their slices.
func (s *Server) Read(descs []CopyDescriptor, id StreamID) *ReadFuture {
	bs := make([]Binding, len(descs))
	for i := range descs {
		bs[i] = descs[i].Binding
	}
	if err := s.streams.EnsureWritten(bs...); err != nil {
		return &ReadFuture{err: err}
	}
	r, err := s.streams.Resolve(id, bs)
	if err != nil {
		return &ReadFuture{err: err}
	}
	defer r.Close()
	st := r.Stream()
	f := &ReadFuture{bufs: make([]*HostBuffer, 0, len(descs))}
	for _, d := range descs {
		if f.err = s.readOne(st, d, f); f.err != nil {
			break
		}
	}
	fence, ferr := stream.NewFence(s.p, st.Sys)
	if ferr != nil {
		// No fence: wait for the stream instead, so the staging is never released under
		// a running copy.
		f.err = errors.Join(f.err, ferr, s.p.StreamSynchronize(st.Sys))
	}
	f.fence = fence
	return f
}

// readOne enqueues one descriptor's copy into a fresh host buffer appended to f.
func (s *Server) readOne(st *stream.Stream, d CopyDescriptor, f *ReadFuture) error {
	l, err := layoutOf(d)
	if err != nil {
		return err
	}
	ptr, size, err := s.streams.Resource(d.Binding)
	if err != nil {
		return err
	}
	if l.deviceSpan() > size {
		return fmt.Errorf("%w: read of %d bytes from a buffer of %d bytes", ErrOutOfBounds, l.deviceSpan(), size)
	}
	buf := reserveHost(st, l.bytes)
	f.bufs = append(f.bufs, buf)
	if l.bytes == 0 {
		return nil
	}
	if !buf.Pinned() {
		// Differs from CubeCL (which forces pinned staging for reads): when pinned
		// memory runs out the bytes come through a blocking copy into the heap buffer,
		// after the stream's earlier work, rather than failing the read.
		if l.pitched {
			return fmt.Errorf("%w for a pitched read of %d bytes", ErrNoPinnedMemory, l.bytes)
		}
		if err := s.p.StreamSynchronize(st.Sys); err != nil {
			return fmt.Errorf("server: read without staging: %w", err)
		}
		return s.p.MemcpyDtoH(buf.heap, ptr)
	}
	// SAFETY: the destination is pinned C memory the future owns; it is released only
	// after the fence recorded after this copy has completed.
	if l.pitched {
		err = s.p.Memcpy2DAsync(hipsys.Copy2D{
			Dst: uintptr(buf.pinned.Ptr()), DstPitch: l.width, Src: uintptr(ptr), SrcPitch: l.pitch,
			Width: l.width, Height: l.height, Kind: hipsys.MemcpyDeviceToHost,
		}, st.Sys)
	} else {
		err = s.p.MemcpyDtoHAsync(buf.pinned.Ptr(), ptr, l.bytes, st.Sys)
	}
	if err != nil {
		return fmt.Errorf("server: read of %d bytes: %w", l.bytes, err)
	}
	return nil
}

// SyncFuture is an enqueued sync. Wait may be called from any goroutine, once.
type SyncFuture struct {
	err   error
	fence stream.Fence
}

// Wait blocks until the stream's work up to the sync is done. A device fault that work
// ran into is returned here.
func (f *SyncFuture) Wait() error {
	if f.err != nil {
		return f.err
	}
	return f.fence.Wait()
}

// Sync is the seed's sync: the claim check a read would make on handles, without the
// read (claims are set at enqueue time, so they are already in place), then a fence on
// stream id that the future waits for.
func (s *Server) Sync(handles []Binding, id StreamID) *SyncFuture {
	if err := s.streams.EnsureWritten(handles...); err != nil {
		return &SyncFuture{err: err}
	}
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return &SyncFuture{err: err}
	}
	defer r.Close()
	fence, err := stream.NewFence(s.p, r.Stream().Sys)
	return &SyncFuture{err: err, fence: fence}
}
