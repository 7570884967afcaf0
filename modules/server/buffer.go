package server

import (
	"fmt"
	"strings"

	"github.com/cubehip/cubehip/modules/server/compute"
)

// StreamID names one of a Device's logical streams; ids are spread over the device's
// streams by id % Options.MaxStreams.
type StreamID = compute.StreamID

// Buffer is an allocation of device memory a Device handed out. It is homed on the
// stream that allocated it (its memory comes from that stream's pools) and may be used
// on any stream: the streams order themselves on its last write.
//
// It owns its memory until Release, which the caller must call exactly once; the memory
// then returns to its pool as soon as no queued work or graph still uses it. A buffer is
// safe to share between goroutines; using it after Release is ErrReleased, never a
// crash.
type Buffer struct {
	d      *Device
	h      compute.Handle  // the owning reference
	b      compute.Binding // a view of h lent to every call, valid while h is held
	size   uint64
	stream StreamID

	released bool // guarded by d.mu
	imported bool // another library's memory (Stream.Import): never kept by Recycle

	// self is the buffer itself, for Call: a *Buffer that Call reads out of an
	// interface and keeps is taken from here, not from the interface, so that the
	// compiler can leave a call's other arguments (a float32 ...) on the caller's stack.
	// A Buffer no Device made has none.
	self *Buffer

	// elem is the element type of the slice the buffer was made for (AllocSlice,
	// UploadSlice; cUnknown otherwise), set before the buffer is handed out: Call refuses
	// the buffer for a pointer to another type.
	elem cType
}

// Size is the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// Stream is the stream whose pools the buffer's memory came from.
func (b *Buffer) Stream() StreamID { return b.stream }

// String names the buffer as a person reads it: "Buffer(#7, 4096 B on cpu:0, stream
// 0)", its id (ids are not reused while it lives), size, device and home stream.
func (b *Buffer) String() string {
	if b == nil || b.d == nil {
		return "Buffer(nil)"
	}
	dev := strings.TrimSuffix(strings.TrimPrefix(b.d.String(), "Device("), ")")
	return fmt.Sprintf("Buffer(#%d, %d B on %s, stream %d)", b.b.ID(), b.size, dev, b.stream)
}

// Release gives the buffer's memory back to its pool. It does not block: work already
// queued that uses the buffer keeps it until that work is done. A second Release is
// ErrReleased; a Release after the device's Close is a no-op, nil (the memory went with
// the device). Safe from any goroutine.
func (b *Buffer) Release() error {
	if b == nil || b.d == nil {
		return fmt.Errorf("%w: not a buffer a Device allocated", ErrInvalidArgument)
	}
	d := b.d
	d.mu.Lock()
	if b.released {
		d.mu.Unlock()
		return fmt.Errorf("%w: %v", ErrReleased, b)
	}
	b.released = true
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	return d.free(b)
}

// free gives b's handle back (the device's lock held, which it unlocks), then runs the
// releases of imports (ReleaseOnCaller) the call found unused, on this goroutine: after
// the unlock, since a release may call into the Device.
func (d *Device) free(b *Buffer) error {
	err := d.srv.Free(&b.h)
	d.scheduleTrim()
	var later []func()
	if b.imported {
		later = d.srv.CallerReleases()
	}
	d.mu.Unlock()
	for _, release := range later {
		release()
	}
	return err
}

// Recycle is Release for a caller that keeps released buffers to hand out again (the
// Python package keeps its released arrays so, as CuPy's pool does, sparing a call into
// the library per allocation). A buffer that is idle is kept, and Recycle reports true:
// b stays the caller's, as good as a fresh allocation of its size on its stream, its
// bytes undefined. Idle means nothing but b refers to its memory (no queued work, graph
// or view), it carries no failure, and a wait confirmed every write of it, so nothing
// from its past can reach its next use. Any other buffer, and an imported one, is
// released as by Release, and Recycle reports false. Errors are Release's.
func (b *Buffer) Recycle() (kept bool, err error) {
	if b == nil || b.d == nil {
		return false, fmt.Errorf("%w: not a buffer a Device allocated", ErrInvalidArgument)
	}
	d := b.d
	d.mu.Lock()
	if b.released {
		d.mu.Unlock()
		return false, fmt.Errorf("%w: %v", ErrReleased, b)
	}
	if !d.closed && !b.imported && d.srv.Idle(b.h, b.b) {
		d.mu.Unlock()
		return true, nil
	}
	b.released = true
	if d.closed {
		d.mu.Unlock()
		return false, nil
	}
	return false, d.free(b)
}

// Alloc allocates size bytes of device memory from the stream's pools; their contents
// are undefined until written. A failure (out of memory after a cleanup and a retry, a
// stream that could not be created) leaves nothing allocated.
func (s Stream) Alloc(size uint64) (*Buffer, error) {
	d := s.d
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	h, err := d.srv.Empty(size, s.id)
	if err != nil {
		return nil, fmt.Errorf("alloc of %d bytes: %w", size, err)
	}
	return s.buffer(h, size)
}

// buffer is the Buffer that owns h, a fresh handle of size bytes on stream s. The caller
// holds the device's lock.
func (s Stream) buffer(h compute.Handle, size uint64) (*Buffer, error) {
	b, err := h.Binding()
	if err != nil {
		_ = h.Release()
		return nil, err
	}
	view := b
	_ = b.Release() // the handle keeps the allocation; the view is lent to calls
	nb := &Buffer{d: s.d, h: h, b: view, size: size, stream: s.id}
	nb.self = nb
	return nb, nil
}

// own checks, under d.mu, that b can be used in a call of d: what names the call and the
// argument for the error ("launch: buffer 2").
func (d *Device) own(b *Buffer, what string) error {
	switch {
	case b == nil:
		return fmt.Errorf("%s: %w: nil buffer", what, ErrInvalidArgument)
	case b.d != d:
		return fmt.Errorf("%s: %w: %v", what, ErrForeign, b)
	case b.released:
		return fmt.Errorf("%s: %w: %v", what, ErrReleased, b)
	}
	return nil
}

// bindings checks bufs (under d.mu) and lends their bindings in d.bufs, which the caller
// clears when the call is done with them.
func (d *Device) bindings(bufs []*Buffer, what string) ([]compute.Binding, error) {
	out := d.bufs[:0]
	for i, b := range bufs {
		if err := d.own(b, what); err != nil {
			if len(bufs) > 1 {
				return nil, fmt.Errorf("buffer %d: %w", i, err)
			}
			return nil, err
		}
		out = append(out, b.b)
	}
	d.bufs = out
	return out, nil
}
