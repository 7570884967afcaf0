package stream_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

func TestDeviceStorageDefersFrees(t *testing.T) {
	p := openCPU(t)
	s := stream.NewDeviceStorage(p, nil)

	h, err := s.Alloc(4096)
	require.NoError(t, err)
	res, err := s.Resource(memory.StorageHandle{ID: h.ID, Offset: 256, Size: 128})
	require.NoError(t, err)
	assert.NotZero(t, res.Base)
	assert.Equal(t, res.Base+256, res.Addr())

	frees := p.Calls("hipFree")
	s.Dealloc(h.ID)
	assert.Equal(t, frees, p.Calls("hipFree"), "hipFree synchronizes the device: deferred")
	assert.Equal(t, 1, s.Pending())
	_, err = s.Resource(h)
	assert.ErrorIs(t, err, memory.ErrNotFound, "a deallocated id is gone at once")

	s.Flush()
	assert.Equal(t, frees+1, p.Calls("hipFree"))
	assert.Zero(t, s.Pending())
}

func TestDeviceStorageZeroSize(t *testing.T) {
	p := openCPU(t)
	s := stream.NewDeviceStorage(p, nil)
	h, err := s.Alloc(0)
	require.NoError(t, err)
	res, err := s.Resource(h)
	require.NoError(t, err)
	assert.Zero(t, res.Base)
	s.Dealloc(h.ID)
	assert.Zero(t, s.Pending(), "nothing to free")
}

func TestDeviceStorageFailures(t *testing.T) {
	p := openCPU(t)
	var logged bytes.Buffer
	s := stream.NewDeviceStorage(p, slog.New(slog.NewTextHandler(&logged, nil)))

	p.FailNext("hipMalloc", 1, hipsys.ErrorOutOfMemory)
	_, err := s.Alloc(64)
	require.ErrorIs(t, err, hipsys.ErrorOutOfMemory)

	h, err := s.Alloc(64)
	require.NoError(t, err)
	s.Dealloc(h.ID)
	p.FailNext("hipFree", 1, hipsys.ErrorInvalidValue)
	s.Flush()
	assert.Contains(t, logged.String(), "deferred hipFree failed")
	assert.Zero(t, s.Pending(), "a failed free is dropped, not retried forever")
}

func TestPinnedStorage(t *testing.T) {
	p := openCPU(t)
	sys, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	s := stream.NewPinnedStorage(p, sys, nil)

	syncs := p.Calls("hipStreamSynchronize")
	h, err := s.Alloc(100)
	require.NoError(t, err)
	assert.Equal(t, syncs+1, p.Calls("hipStreamSynchronize"), "a pinned allocation synchronizes its stream, as CubeCL's does")
	res, err := s.Resource(h)
	require.NoError(t, err)
	copy(hipsys.HostPtr(res.Addr()).Bytes(100), "pinned")

	frees := p.Calls("hipHostFree") + p.Calls("hipFreeHost")
	s.Dealloc(h.ID)
	assert.Equal(t, frees+1, p.Calls("hipHostFree")+p.Calls("hipFreeHost"), "pinned frees are immediate")

	p.FailNext("hipStreamSynchronize", 1, hipsys.ErrorLaunchFailure)
	_, err = s.Alloc(100)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	p.FailNext("hipHostMalloc", 1, hipsys.ErrorOutOfMemory)
	_, err = s.Alloc(100)
	require.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
}

func TestStreamReserveRetriesAfterCleanup(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)

	p.FailNext("hipMalloc", 1, hipsys.ErrorOutOfMemory)
	h, err := s.Reserve(1 << 20)
	require.NoError(t, err, "the retry after cleanup succeeds")
	require.NoError(t, h.Release())

	p.Fail("hipMalloc", hipsys.ErrorOutOfMemory)
	_, err = s.Reserve(40 << 20)
	require.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
	p.Clear("hipMalloc")

	_, err = s.Reserve(1 << 62)
	require.ErrorIs(t, err, memory.ErrBufferTooBig, "never retried: no pool can hold it")
}

func TestStreamReservePinnedRoundTrip(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	x := newDeviceBuffer(t, m, 0, 64)

	up, err := s.ReservePinned(64)
	require.NoError(t, err)
	copy(up.Bytes(), bytes.Repeat([]byte{0x42}, 64))
	require.NoError(t, m.Over(0, []stream.Binding{x.b}).Execute(func() error {
		r, err := m.Resolve(0, []stream.Binding{x.b})
		require.NoError(t, err)
		defer r.Close()
		ptr, n, err := m.Resource(x.b)
		require.NoError(t, err)
		require.Equal(t, uint64(64), n)
		return p.MemcpyHtoDAsync(ptr, up.Ptr(), 64, s.Sys)
	}))
	s.Drops.Push(up, up.Size())
	got, err := download(t, m, 0, x, 64)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{0x42}, 64), got)
	require.NoError(t, s.Cleanup())
	assert.Zero(t, s.Pinned.Usage().NumberAllocs, "two flushes released the staging buffer")

	empty, err := s.ReservePinned(0)
	require.NoError(t, err)
	assert.NotNil(t, empty.Bytes(), "zero-size views are empty, never the null pointer")
	assert.Empty(t, empty.Bytes())
	require.NoError(t, empty.Release())
}

func TestResourceOfUnknownStream(t *testing.T) {
	hb := newHostBuffers(t)
	m := newMulti(t, nil)
	_, _, err := m.Resource(hb.binding(5, 64))
	assert.ErrorIs(t, err, memory.ErrNotFound)
}
