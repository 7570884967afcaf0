package memory_test

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

var device = memory.DeviceProps{MemoryTotal: 8 * gib, Alignment: 256}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newManager(t testing.TB, opts ...memory.Option) (*memory.Manager, *memorytest.Storage) {
	t.Helper()
	st := memorytest.New()
	m, err := memory.New(st, device, append([]memory.Option{memory.WithLogger(quiet)}, opts...)...)
	require.NoError(t, err)
	return m, st
}

func explicit(pools ...memory.PoolSpec) memory.Option {
	return memory.WithLayout(memory.Explicit(pools...))
}

func reserve(t testing.TB, m *memory.Manager, size uint64) memory.Handle {
	t.Helper()
	h, err := m.Reserve(size)
	require.NoError(t, err)
	return h
}

func addr(t testing.TB, m *memory.Manager, h memory.Handle) uintptr {
	t.Helper()
	r, err := m.HandleResource(h)
	require.NoError(t, err)
	return r.Addr()
}

func locate(t testing.TB, m *memory.Manager, h memory.Handle) memory.Location {
	t.Helper()
	b, err := h.Binding()
	require.NoError(t, err)
	defer b.Release()
	loc, err := m.Locate(b)
	require.NoError(t, err)
	return loc
}

func notFound(t testing.TB, err error) memory.NotFoundReason {
	t.Helper()
	var nf *memory.NotFoundError
	require.ErrorAs(t, err, &nf)
	require.ErrorIs(t, err, memory.ErrNotFound)
	return nf.Reason
}

func TestReserveThenBind(t *testing.T) {
	m, _ := newManager(t)
	client := m.NewHandle(4 * kib)
	b, err := client.Binding()
	require.NoError(t, err)
	_, err = m.Resource(b)
	assert.Equal(t, memory.NeverBound, notFound(t, err))

	reserved := reserve(t, m, 4*kib)
	require.NoError(t, m.Bind(&reserved, client, 7))
	assert.False(t, reserved.Valid(), "bind consumes the reserved handle")
	assert.Equal(t, uint64(7), client.Cursor())

	r, err := m.Resource(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(4*kib), r.Size)
	assert.ErrorIs(t, m.Bind(&reserved, client, 0), memory.ErrReleased)

	again := reserve(t, m, 4*kib)
	assert.ErrorIs(t, m.Bind(&again, client, 0), memory.ErrAlreadyBound)
	assert.True(t, again.Valid(), "a failed bind changes nothing")

	require.NoError(t, b.Release())
	require.NoError(t, client.Release())
	require.NoError(t, again.Release())
	assert.Equal(t, uint64(0), m.Usage().NumberAllocs)
}

func TestLookupErrors(t *testing.T) {
	m, _ := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	h := reserve(t, m, kib)
	stale := h // a copy, not a reference
	require.NoError(t, h.Release())

	_, err := m.HandleResource(stale)
	assert.Equal(t, memory.Released, notFound(t, err), "a freed slice is unreachable through old copies")
	assert.ErrorIs(t, stale.Release(), memory.ErrReleased, "a stale copy cannot release twice")

	next := reserve(t, m, kib)
	_, err = m.HandleResource(stale)
	assert.Equal(t, memory.Released, notFound(t, err), "the slice went to a new family")
	assert.NotEqual(t, stale.ID(), next.ID())
	require.NoError(t, next.Release())

	var zero memory.Binding
	_, err = m.Resource(zero)
	assert.Equal(t, memory.Released, notFound(t, err))
}

func TestInstallRefusedByBinding(t *testing.T) {
	m, _ := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}, memory.SlicedSpec{PageSize: 64 * kib}))
	h := reserve(t, m, 32*kib) // pool 1
	assert.Equal(t, uint8(1), locate(t, m, h).Pool)
	b, err := h.Binding()
	require.NoError(t, err)
	require.NoError(t, h.Release())
	// The binding keeps the slice busy, so the install is refused.
	var inUse *memory.PoolsInUseError
	require.ErrorAs(t, m.InstallLayout(memory.Explicit(memory.SlicedSpec{PageSize: 4 * kib})), &inUse)
	assert.Equal(t, uint64(32*kib), inUse.BytesInUse)
	require.NoError(t, b.Release())
	require.NoError(t, m.InstallLayout(memory.Explicit(memory.SlicedSpec{PageSize: 4 * kib})))
	assert.Len(t, m.Layout(), 1)
}

func TestStorageErrorsPropagate(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	boom := errors.New("boom")
	st.FailAlloc = func(uint64) error { return boom }
	_, err := m.Reserve(kib)
	assert.ErrorIs(t, err, boom)
	st.FailAlloc = nil
	h := reserve(t, m, kib)
	assert.NoError(t, h.Release())
}

func TestBufferTooBig(t *testing.T) {
	m, _ := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	_, err := m.Reserve(5 * kib)
	assert.ErrorIs(t, err, memory.ErrBufferTooBig)
	_, err = m.Reserve(^uint64(0))
	assert.ErrorIs(t, err, memory.ErrBufferTooBig)
}
