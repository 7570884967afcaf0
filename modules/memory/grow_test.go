package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
)

// TestSlicedPoolStartsSmall: an uncapped sliced pool's first page is 2 MiB (or the slice,
// if larger), each further page as large as the pool's pages together, up to the spec's
// page: a pool that holds little reserves little, one that grows reaches whole pages.
func TestSlicedPoolStartsSmall(t *testing.T) {
	m, _ := newManager(t, explicit(memory.SlicedSpec{PageSize: 64 * mib, MaxSliceSize: 4 * mib}))
	var held []memory.Handle
	defer func() {
		for _, h := range held {
			require.NoError(t, h.Release())
		}
	}()
	reserved := func() uint64 { return m.Usage().BytesReserved }
	fill := func(size uint64) { held = append(held, reserve(t, m, size)) }

	fill(128 * kib)
	assert.Equal(t, uint64(2*mib), reserved(), "the first page is 2 MiB")
	for range 15 {
		fill(128 * kib) // the rest of the first page
	}
	assert.Equal(t, uint64(2*mib), reserved())
	fill(128 * kib)
	assert.Equal(t, uint64(4*mib), reserved(), "the second page is as large as the first")
	fill(2 * mib)
	assert.Equal(t, uint64(8*mib), reserved(), "then the pool doubles")
	fill(4 * mib)
	fill(4 * mib)
	assert.Equal(t, uint64(16*mib), reserved())
	for range 20 {
		fill(4 * mib)
	}
	rep := m.Report().Dynamic[0]
	assert.Equal(t, uint64(128*mib), rep.Usage.BytesReserved, "whole pages once the pool holds one page's worth")
	assert.Equal(t, 7, rep.Pages, "2 + 2 + 4 + 8 + 16 + 32 + 64 MiB")
}

// TestSlicedPoolFirstPageFitsTheSlice: a slice larger than the first page gets a page of
// its size.
func TestSlicedPoolFirstPageFitsTheSlice(t *testing.T) {
	m, _ := newManager(t, explicit(memory.SlicedSpec{PageSize: 64 * mib, MaxSliceSize: 16 * mib}))
	h := reserve(t, m, 10*mib+1)
	defer func() { require.NoError(t, h.Release()) }()
	assert.Equal(t, uint64(10*mib+256), m.Usage().BytesReserved)
}

// TestSlicedPoolWholePages: a capped pool counts whole pages against its cap, and a pool
// whose pages are no larger than the first page has nothing to shrink: both allocate the
// spec's page from the first slice on.
func TestSlicedPoolWholePages(t *testing.T) {
	for _, spec := range []memory.SlicedSpec{
		{PageSize: 64 * mib, MaxSliceSize: 4 * mib, MaxPoolSize: 256 * mib},
		{PageSize: 2 * mib},
		{PageSize: 512 * kib},
	} {
		m, _ := newManager(t, explicit(spec))
		h := reserve(t, m, 128*kib)
		assert.Equal(t, spec.PageSize, m.Usage().BytesReserved, "%v", spec)
		require.NoError(t, h.Release())
	}
}

// TestSmallBufferSmallReserve: with the default layout on a device of 24 GiB, whose
// smallest rung has 24 MiB pages, one small buffer reserves 2 MiB.
func TestSmallBufferSmallReserve(t *testing.T) {
	m, err := memory.New(memorytest.New(), memory.DeviceProps{MemoryTotal: 24 * gib, Alignment: 256}, memory.WithLogger(quiet))
	require.NoError(t, err)
	h := reserve(t, m, 128*kib)
	assert.Equal(t, uint64(2*mib), m.Usage().BytesReserved)
	require.NoError(t, h.Release())
}

// TestSpare: the bytes of the pages no live slice uses, what a cleanup gives back, and
// the reservations served.
func TestSpare(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}, memory.ExclusiveSpec{MaxAllocSize: 64 * kib}))
	a := reserve(t, m, kib)
	b := reserve(t, m, kib)
	c := reserve(t, m, 16*kib)
	assert.Equal(t, uint64(3), m.Reservations())
	assert.Zero(t, m.Spare())
	require.NoError(t, a.Release())
	assert.Zero(t, m.Spare(), "the page still holds b")
	require.NoError(t, b.Release())
	assert.Equal(t, uint64(4*kib), m.Spare())
	require.NoError(t, c.Release())
	assert.Equal(t, m.Usage().BytesReserved, m.Spare(), "every page is free")
	assert.Greater(t, m.Spare(), uint64(4*kib+16*kib))
	m.Cleanup()
	assert.Zero(t, m.Spare())
	assert.Zero(t, st.Live())
	assert.Equal(t, uint64(3), m.Reservations(), "a cleanup serves no reservation")
}
