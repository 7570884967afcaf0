package stream_test

import (
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
	"github.com/cubehip/cubehip/modules/stream"
)

// smallProps keeps the cpu device's pools small: a test allocates a few KiB.
var smallProps = memory.DeviceProps{MemoryTotal: 256 << 20, Alignment: 256}

// openCPU returns the cpu platform wrapped for fault injection.
func openCPU(t testing.TB) *faults.Platform {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	return faults.Wrap(p)
}

// newMulti returns a MultiStream over p (nil: no platform, for tests that never create
// a stream) that is closed when the test ends.
func newMulti(t testing.TB, p hipsys.Platform, opts ...stream.Option) *stream.MultiStream {
	t.Helper()
	opts = append([]stream.Option{
		stream.WithGPUProps(smallProps), stream.WithDropPolicy(stream.DefaultDropPolicy),
		stream.WithLogger(slog.New(slog.DiscardHandler)),
	}, opts...)
	m, err := stream.New(p, opts...)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, m.Close())
		if leaksAllowed[t.Name()] {
			return
		}
		// Every test ends with nothing live: the test's own references were released by
		// cleanups registered after this one, so what is left is what this package
		// failed to give back.
		for _, id := range m.StreamIDs() {
			s := m.TryStream(id)
			_ = s.Cleanup()
			_ = s.Cleanup()
			assert.Zero(t, s.GPU.Usage().NumberAllocs, "live device allocations on stream %d", id)
			assert.Zero(t, s.Pinned.Usage().NumberAllocs, "live pinned allocations on stream %d", id)
		}
	})
	return m
}

// leaksAllowed names the tests that leak on purpose.
var leaksAllowed = map[string]bool{
	"TestCrossStreamPinHeldWhileConsumerRuns": true, // a failed fence leaks its pin
}

// hostBuffers makes bindings without a device: a memory manager over the memory
// module's test storage. Each binding is released when the test ends.
type hostBuffers struct {
	t   testing.TB
	mgr *memory.Manager
	mu  sync.Mutex
	hs  []memory.Handle
}

func newHostBuffers(t testing.TB) *hostBuffers {
	mgr, err := memory.New(memorytest.New(), smallProps)
	require.NoError(t, err)
	b := &hostBuffers{t: t, mgr: mgr}
	t.Cleanup(func() {
		for i := range b.hs {
			_ = b.hs[i].Release()
		}
	})
	return b
}

// binding reserves size bytes and returns a binding of them homed on stream id. The
// binding is an uncounted view: the handle kept here owns the allocation.
func (hb *hostBuffers) binding(id stream.ID, size uint64) stream.Binding {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	h, err := hb.mgr.Reserve(size)
	require.NoError(hb.t, err)
	b, err := h.Binding()
	require.NoError(hb.t, err)
	view := b
	require.NoError(hb.t, b.Release())
	hb.hs = append(hb.hs, h)
	return stream.Binding{Binding: view, Stream: id}
}

// deviceBuffer is an allocation in a stream's own device pools.
type deviceBuffer struct {
	h   memory.Handle
	b   stream.Binding
	ptr hipsys.DevicePtr
}

// newDeviceBuffer reserves size bytes in stream id's device pools.
func newDeviceBuffer(t testing.TB, m *stream.MultiStream, id stream.ID, size uint64) *deviceBuffer {
	t.Helper()
	s, err := m.Stream(id)
	require.NoError(t, err)
	h, err := s.GPU.Reserve(size)
	require.NoError(t, err)
	b, err := h.Binding()
	require.NoError(t, err)
	res, err := s.GPU.Resource(b)
	require.NoError(t, err)
	d := &deviceBuffer{h: h, b: stream.Binding{Binding: b, Stream: id}, ptr: hipsys.DevicePtr(res.Addr())}
	t.Cleanup(func() { _ = d.b.Release(); _ = d.h.Release() })
	return d
}

// pinned is a pinned host buffer owned by the test.
func pinned(t testing.TB, p hipsys.Platform, data []byte) hipsys.HostPtr {
	t.Helper()
	ptr, err := p.HostMalloc(uint64(len(data)), hipsys.HostMallocDefault)
	require.NoError(t, err)
	copy(ptr.Bytes(len(data)), data)
	t.Cleanup(func() { _ = p.HostFree(ptr) })
	return ptr
}

// upload is a write scope that copies data into dst on stream id from pinned memory,
// the way the server's write does.
func upload(m *stream.MultiStream, id stream.ID, dst *deviceBuffer, src hipsys.HostPtr, n uint64) error {
	return m.Over(id, []stream.Binding{dst.b}).Execute(func() error {
		r, err := m.Resolve(id, []stream.Binding{dst.b})
		if err != nil {
			return err
		}
		defer r.Close()
		return m.Platform().MemcpyHtoDAsync(dst.ptr, src, n, r.Stream().Sys)
	})
}

// download reads n bytes of src on stream id, waiting for them, as the server's read
// does (claim check, command, copy, fence).
func download(t testing.TB, m *stream.MultiStream, id stream.ID, src *deviceBuffer, n int) ([]byte, error) {
	t.Helper()
	if err := m.EnsureWritten(src.b); err != nil {
		return nil, err
	}
	r, err := m.Resolve(id, []stream.Binding{src.b})
	if err != nil {
		return nil, err
	}
	p := m.Platform()
	dst := pinned(t, p, make([]byte, n))
	cerr := p.MemcpyDtoHAsync(dst, src.ptr, uint64(n), r.Stream().Sys)
	f, ferr := stream.NewFence(p, r.Stream().Sys)
	require.NoError(t, r.Close())
	if ferr == nil {
		ferr = f.Wait()
	}
	if err := errors.Join(ferr, cerr); err != nil {
		return nil, err
	}
	return append([]byte(nil), dst.Bytes(n)...), nil
}

var hipsysNotReady = hipsys.ErrorNotReady
