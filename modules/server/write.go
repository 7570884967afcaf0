package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// forceFlushBytes is CubeCL's threshold above which an upload flushes the drop queue at
// once: a large staging buffer should not wait for the policy to be handed back.
const forceFlushBytes = 10 << 20

// WriteOp is one host-to-device copy: the bytes of a dense tensor and where they go.
type WriteOp struct {
	Desc CopyDescriptor
	Data []byte
}

// Write is the seed's write: each copy runs in its own write scope over its destination,
// in order, on stream id. A copy that succeeds fills its destination, which releases an
// earlier failure's hold on it (a buffer a launch left stale is recovered by writing it
// from the host just as much as by relaunching into it); one that fails leaves the
// destination carrying the failure, which a later read of it returns.
//
// Every copy is attempted, however the one before it went: a loop that stopped early
// would leave the destinations it never reached holding stale bytes and carrying no
// failure to say so, the one outcome this design exists to prevent.
//
// Data is Go memory: it is copied into pinned staging before the call returns
// (DESIGN §Semantics 5), so the caller may reuse it at once. Write returns nothing, as in
// the seed: failures live on the buffers.
func (s *Server) Write(ops []WriteOp, id StreamID) {
	for i := range ops {
		op := &ops[i]
		s.one[0] = op.Desc.Binding
		_ = s.streams.Over(id, s.one[:]).Execute(func() error {
			r, err := s.streams.Resolve(id, s.one[:])
			if err != nil {
				return err
			}
			defer r.Close()
			return s.writeToGPU(r.Stream(), op.Desc, op.Data)
		})
		s.one[0] = Binding{}
	}
}

// writeToGPU is CubeCL's write_to_gpu on the command's stream st: check the strides,
// resolve the destination, stage the bytes into pinned memory and enqueue the copy; the
// staging buffer goes to the drop queue, which releases it once the copy is done.
//
// Differs from CubeCL (DESIGN §Semantics 4): CubeCL panics when the pinned reservation
// or the driver copy fails; both are returned here, so the scope taints the destination.
// When pinned memory runs out, a linear copy falls back to a blocking copy from Go
// memory after the stream's earlier work (not while recording: that would invalidate the
// capture); a pitched one cannot (2D copies take platform memory only) and fails.
func (s *Server) writeToGPU(st *stream.Stream, d CopyDescriptor, data []byte) error {
	l, err := layoutOf(d)
	if err != nil {
		return err
	}
	ptr, size, err := s.streams.Resource(d.Binding)
	if err != nil {
		return err
	}
	// Before any staging: an empty [0, 1] tensor must not reach a 2D copy.
	if len(data) == 0 {
		return nil
	}
	n := uint64(len(data))
	if l.pitched && n != l.bytes {
		return fmt.Errorf("%w: %d bytes given for a pitched copy of %d", ErrInvalidArgument, n, l.bytes)
	}
	if span := max(n, l.deviceSpan()); span > size {
		return fmt.Errorf("%w: write of %d bytes exceeds the target buffer of %d bytes", ErrOutOfBounds, span, size)
	}
	staged, err := st.ReservePinned(n)
	if err != nil {
		return s.writeUnstaged(st, d, l, ptr, data, err)
	}
	copy(staged.Bytes(), data)
	p := s.p
	// SAFETY: staged is pinned C memory owned by this command; the drop queue releases
	// it only after a fence recorded after the copy has completed.
	if l.pitched {
		err = p.Memcpy2DAsync(hipsys.Copy2D{
			Dst: uintptr(ptr), DstPitch: l.pitch, Src: uintptr(staged.Ptr()), SrcPitch: l.width,
			Width: l.width, Height: l.height, Kind: hipsys.MemcpyHostToDevice,
		}, st.Sys)
	} else {
		err = p.MemcpyHtoDAsync(ptr, staged.Ptr(), n, st.Sys)
	}
	if err != nil {
		// Nothing was queued that reads the staging buffer.
		_ = staged.Release()
		return fmt.Errorf("server: write of %d bytes: %w", n, err)
	}
	if ferr := st.Drop(staged, n, n > forceFlushBytes); ferr != nil {
		// The queue's own trouble says nothing about the copy just enqueued.
		s.log.Warn("server: drop-queue flush failed", "err", ferr)
	}
	return nil
}

// writeUnstaged is the write's fallback when pinned staging ran out (why).
func (s *Server) writeUnstaged(st *stream.Stream, d CopyDescriptor, l layout, ptr hipsys.DevicePtr, data []byte, why error) error {
	if l.pitched || st.Capture.IsRecording() {
		return fmt.Errorf("%w for a %d-byte write: %w", ErrNoPinnedMemory, len(data), why)
	}
	// The blocking copy is not ordered with the stream's queued work: wait for it.
	if err := s.p.StreamSynchronize(st.Sys); err != nil {
		return fmt.Errorf("server: write without staging: %w", err)
	}
	if err := s.p.MemcpyHtoD(ptr, data); err != nil {
		return fmt.Errorf("server: write of %d bytes: %w", len(data), err)
	}
	return nil
}

// Create is a new allocation on stream id holding a copy of data (a 1-D byte tensor).
// On failure nothing is left allocated and the error is returned: no one else holds the
// buffer, so there is nothing to carry the failure.
func (s *Server) Create(data []byte, id StreamID) (Handle, error) {
	h, err := s.Empty(uint64(len(data)), id)
	if err != nil {
		return Handle{}, err
	}
	b, err := h.Binding()
	if err == nil {
		s.Write([]WriteOp{{Desc: Linear(b, len(data)), Data: data}}, id)
		err = s.streams.EnsureWritten(b)
		_ = b.Release()
	}
	if err != nil {
		_ = h.Release()
		return Handle{}, err
	}
	return h, nil
}

// createWithData is CubeCL's create_with_data inside a command on st: a device buffer
// holding data, uploaded through pinned staging. The caller owns the handle.
func (s *Server) createWithData(st *stream.Stream, data []byte) (memory.Handle, error) {
	n := uint64(len(data))
	h, err := st.Reserve(n)
	if err != nil {
		return memory.Handle{}, err
	}
	if n == 0 {
		return h, nil
	}
	res, err := st.GPU.HandleResource(h)
	if err == nil {
		var staged *stream.Staging
		staged, err = st.ReservePinned(n)
		if err != nil {
			err = fmt.Errorf("%w: %w", ErrNoPinnedMemory, err)
		} else {
			copy(staged.Bytes(), data)
			// SAFETY: staged is pinned C memory, released by the drop queue after a
			// fence that follows the copy.
			err = s.p.MemcpyHtoDAsync(hipsys.DevicePtr(res.Addr()), staged.Ptr(), n, st.Sys)
			if err != nil {
				_ = staged.Release()
			} else if ferr := st.Drop(staged, n, false); ferr != nil {
				s.log.Warn("server: drop-queue flush failed", "err", ferr)
			}
		}
	}
	if err != nil {
		_ = h.Release()
		return memory.Handle{}, err
	}
	return h, nil
}
