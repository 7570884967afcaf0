package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestImport(t *testing.T) {
	m, st := newManager(t)
	before := m.Usage()
	h, err := m.Import(0x10000, 4096, "owner")
	require.NoError(t, err)
	assert.Equal(t, 1, m.Imports())
	assert.Equal(t, before, m.Usage(), "imported memory is not the pools'")
	assert.Zero(t, st.Live(), "the storage is never asked")

	res, err := m.HandleResource(h)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x10000), res.Addr())
	assert.Equal(t, uint64(4096), res.Size)

	// A view trims like any other handle's.
	b, err := h.Binding()
	require.NoError(t, err)
	v, err := b.Clone()
	require.NoError(t, err)
	require.NoError(t, v.Narrow(256, 1024))
	res, err = m.Resource(v)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x10000+256), res.Addr())
	assert.Equal(t, uint64(4096-256-1024), res.Size)

	// Reserving never lands on imported memory.
	r := reserve(t, m, 4096)
	rr, err := m.HandleResource(r)
	require.NoError(t, err)
	assert.NotEqual(t, uintptr(0x10000), rr.Addr())
	require.NoError(t, r.Release())

	// Referenced: nothing to reclaim, whichever reference is left.
	require.NoError(t, h.Release())
	assert.Empty(t, m.ReclaimImports(nil))
	require.NoError(t, b.Release())
	assert.Empty(t, m.ReclaimImports(nil))
	require.NoError(t, v.Release())
	assert.Equal(t, []any{"owner"}, m.ReclaimImports(nil))
	assert.Empty(t, m.ReclaimImports(nil), "an owner comes back once")
	assert.Equal(t, 0, m.Imports())
	_, err = m.Resource(v)
	assert.ErrorIs(t, err, memory.ErrNotFound)

	// The slot is refilled by the next import.
	h2, err := m.Import(0x20000, 16, 2)
	require.NoError(t, err)
	res, err = m.HandleResource(h2)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x20000), res.Addr())
	assert.Equal(t, []any{2}, m.DropImports(nil), "drop takes referenced imports too")
	_, err = m.HandleResource(h2)
	assert.ErrorIs(t, err, memory.ErrNotFound)
	require.NoError(t, h2.Release(), "the user's reference is still given back once")
	assert.Equal(t, 0, m.Imports())
}

func TestImportRefusals(t *testing.T) {
	m, _ := newManager(t)
	for _, c := range []struct {
		base uintptr
		size uint64
	}{{0, 8}, {0x1000, 0}, {^uintptr(0) - 3, 16}} {
		_, err := m.Import(c.base, c.size, nil)
		assert.ErrorIs(t, err, memory.ErrInvalidImport)
	}
	assert.Equal(t, 0, m.Imports())
}
