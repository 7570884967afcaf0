package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestExclusivePageSizedByAverage(t *testing.T) {
	m, _ := newManager(t, explicit(memory.ExclusiveSpec{MaxAllocSize: 64 * kib}))
	// The average starts at half the maximum, so a small first request
	// gets a page of about 32 KiB and later requests up to that reuse it.
	h := reserve(t, m, kib)
	rep := m.Report().Dynamic[0]
	assert.Equal(t, uint64(32*kib)-256, rep.Usage.BytesReserved, "EMA 0.99*32K + 0.01*1K, aligned")
	require.NoError(t, h.Release())
	h = reserve(t, m, 30*kib)
	assert.Equal(t, 1, m.Report().Dynamic[0].Pages, "reused")
	require.NoError(t, h.Release())

	_, err := m.Reserve(64*kib + 1)
	assert.ErrorIs(t, err, memory.ErrBufferTooBig)
}

func TestExclusivePicksLowestFreeCount(t *testing.T) {
	m, _ := newManager(t, explicit(memory.ExclusiveSpec{MaxAllocSize: 64 * kib, DeallocPeriod: 1000}))
	a, b := reserve(t, m, kib), reserve(t, m, kib)
	addrB := addr(t, m, b)
	require.NoError(t, b.Release())
	c := reserve(t, m, kib) // b's page, count 4 -> 3
	assert.Equal(t, addrB, addr(t, m, c))
	require.NoError(t, a.Release())
	require.NoError(t, c.Release())
	// a's page still counts 4, b's 3: b's is preferred, a's ages.
	for range 3 {
		d := reserve(t, m, kib)
		assert.Equal(t, addrB, addr(t, m, d))
		require.NoError(t, d.Release())
	}
}

func TestExclusivePeriodicRelease(t *testing.T) {
	m, st := newManager(t, explicit(memory.ExclusiveSpec{MaxAllocSize: 64 * kib, DeallocPeriod: 50}))
	a, b := reserve(t, m, kib), reserve(t, m, kib) // 2 reservations
	require.NoError(t, b.Release())
	// a stays busy; b sits free. Every 10 reservations (period/5) a cleanup
	// ages free pages; a new page starts at 4, released at 5.
	for range 8 {
		h, err := m.Reserve(kib) // reuses b's page, keeping it young
		require.NoError(t, err)
		require.NoError(t, h.Release())
	}
	assert.Equal(t, 2, st.Live())
	require.NoError(t, a.Release())
	// Every request now reuses b's younger page; a's idles and ages.
	for range 40 {
		h, err := m.Reserve(kib)
		require.NoError(t, err)
		require.NoError(t, h.Release())
	}
	assert.Equal(t, 1, st.Live(), "the idle page went back after a periodic cleanup")
}

func TestExclusiveExplicitCleanupFreesAll(t *testing.T) {
	m, st := newManager(t, explicit(memory.ExclusiveSpec{MaxAllocSize: 64 * kib}))
	a, b := reserve(t, m, kib), reserve(t, m, kib)
	for range 100 {
		h := reserve(t, m, 0)
		require.NoError(t, h.Release())
	}
	require.NoError(t, a.Release())
	assert.Equal(t, 3, st.Live(), "no period: only explicit cleanup frees (a, b, the page the zero-size requests reused)")
	m.Cleanup()
	assert.Equal(t, 1, st.Live())
	assert.Equal(t, uint32(0), locate(t, m, b).Page, "renumbered")
	require.NoError(t, b.Release())
}

func TestZeroSizeAllocations(t *testing.T) {
	m, _ := newManager(t) // SubSlices: pool 0 is the exclusive pool of max 0
	h := reserve(t, m, 0)
	assert.Equal(t, uint8(0), locate(t, m, h).Pool)
	r, err := m.HandleResource(h)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), r.Size)
	// A live zero-size allocation refuses an install.
	assert.ErrorIs(t, m.InstallLayout(memory.Layout{Preset: memory.ExclusivePages}), memory.ErrPoolsInUse)
	require.NoError(t, h.Release())
	assert.NoError(t, m.InstallLayout(memory.Layout{Preset: memory.ExclusivePages}))
}
