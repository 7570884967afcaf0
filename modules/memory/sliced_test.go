package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestSlicedFirstFitAndPadding(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	a := reserve(t, m, 100)  // [0, 256)
	b := reserve(t, m, 300)  // [256, 768)
	c := reserve(t, m, 1000) // [768, 1792)
	base := addr(t, m, a)
	assert.Equal(t, base+256, addr(t, m, b))
	assert.Equal(t, base+768, addr(t, m, c))
	assert.Equal(t, 1, st.Live(), "one page")
	u := m.Usage()
	assert.Equal(t, memory.Usage{NumberAllocs: 3, BytesInUse: 1400, BytesPadding: 156 + 212 + 24, BytesReserved: 4 * kib}, u)

	require.NoError(t, b.Release())
	d := reserve(t, m, 500) // first fit: the hole b left
	assert.Equal(t, base+256, addr(t, m, d))
	e := reserve(t, m, 2304) // the rest of the page: [1792, 4096)
	assert.Equal(t, base+1792, addr(t, m, e))
	f := reserve(t, m, 1)
	assert.Equal(t, 2, st.Live(), "a full page grows the pool")
	for _, h := range []*memory.Handle{&a, &c, &d, &e, &f} {
		require.NoError(t, h.Release())
	}
}

// The free-space check at a page's end, on both sides of the boundary: a request that
// fills the last free slice exactly goes there, and one a single alignment unit larger
// goes to a new page. Handed that slice, it would run past the page's end into memory
// the pool does not own (and count more bytes in use than the pool reserves).
func TestSlicedFreeSpaceAtThePageEnd(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	a := reserve(t, m, 4*kib-256) // [0, 3840): 256 bytes left free at the end
	base := addr(t, m, a)

	exact := reserve(t, m, 256)
	assert.Equal(t, base+3840, addr(t, m, exact), "an exact fit takes the last slice")
	assert.Equal(t, 1, st.Live())
	require.NoError(t, exact.Release())

	over := reserve(t, m, 256+1) // 512 bytes with its padding: one unit more than is free
	assert.Equal(t, 2, st.Live(), "a request one unit over the free space grows the pool")
	at := addr(t, m, over)
	assert.False(t, at >= base && at < base+4*kib, "placed in the full page at %#x (page at %#x)", at, base)
	u := m.Usage()
	assert.Equal(t, memory.Usage{NumberAllocs: 2, BytesInUse: 4*kib - 256 + 257, BytesPadding: 255, BytesReserved: 8 * kib}, u)
	for _, h := range []*memory.Handle{&a, &over} {
		require.NoError(t, h.Release())
	}
}

func TestSlicedCoalesce(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	var hs []memory.Handle
	for range 4 {
		hs = append(hs, reserve(t, m, kib))
	}
	base := addr(t, m, hs[0])
	require.NoError(t, hs[1].Release())
	require.NoError(t, hs[2].Release())
	// Only a merged run of the two middle slices holds 2 KiB.
	big := reserve(t, m, 2*kib)
	assert.Equal(t, base+kib, addr(t, m, big))
	assert.Equal(t, 1, st.Live())
	assert.Equal(t, uint32(1), locate(t, m, big).Slice)
	assert.Equal(t, uint32(2), locate(t, m, hs[3]).Slice, "renumbered after the merge")
	for _, h := range []*memory.Handle{&hs[0], &hs[3], &big} {
		require.NoError(t, h.Release())
	}
}

func TestSlicedAccepts(t *testing.T) {
	tests := []struct {
		name string
		spec memory.SlicedSpec
		size uint64
		ok   bool
	}{
		{"up to max slice", memory.SlicedSpec{PageSize: 4 * kib, MaxSliceSize: kib}, kib, true},
		{"over max slice, far from page", memory.SlicedSpec{PageSize: 4 * kib, MaxSliceSize: kib}, 2 * kib, false},
		{"near page: under 20% waste", memory.SlicedSpec{PageSize: 4 * kib, MaxSliceSize: kib}, 3600, true},
		{"near page but capped", memory.SlicedSpec{PageSize: 4 * kib, MaxSliceSize: kib, MaxPoolSize: 8 * kib}, 3600, false},
		{"over a page", memory.SlicedSpec{PageSize: 4 * kib}, 4*kib + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A direct pool behind it catches what the sliced pool refuses.
			m, _ := newManager(t, explicit(tt.spec, memory.DirectSpec{}))
			h := reserve(t, m, tt.size)
			defer h.Release()
			assert.Equal(t, tt.ok, locate(t, m, h).Pool == 0)
		})
	}
}

func TestSlicedCapacity(t *testing.T) {
	capped := memory.SlicedSpec{PageSize: 4 * kib, MaxPoolSize: 8 * kib}

	t.Run("error when alone", func(t *testing.T) {
		m, _ := newManager(t, explicit(capped))
		a, b := reserve(t, m, 4*kib), reserve(t, m, 4*kib)
		_, err := m.Reserve(4 * kib)
		var ce *memory.CapacityError
		require.ErrorAs(t, err, &ce)
		assert.ErrorIs(t, err, memory.ErrPoolCapacityExceeded)
		assert.Equal(t, memory.CapacityError{Size: 4 * kib, Capacity: 8 * kib, InUse: 8 * kib}, *ce)
		require.NoError(t, a.Release())
		c := reserve(t, m, 4*kib) // reuse, not growth
		require.NoError(t, b.Release())
		require.NoError(t, c.Release())
	})
	t.Run("spills to the next accepting pool", func(t *testing.T) {
		m, _ := newManager(t, explicit(capped, memory.SlicedSpec{PageSize: 16 * kib}))
		a, b := reserve(t, m, 4*kib), reserve(t, m, 4*kib)
		c := reserve(t, m, 4*kib)
		assert.Equal(t, uint8(1), locate(t, m, c).Pool)
		for _, h := range []*memory.Handle{&a, &b, &c} {
			require.NoError(t, h.Release())
		}
	})
	t.Run("storage failure after a capacity error reports the capacity", func(t *testing.T) {
		m, st := newManager(t, explicit(capped, memory.SlicedSpec{PageSize: 16 * kib}))
		a, b := reserve(t, m, 4*kib), reserve(t, m, 4*kib)
		st.FailAlloc = func(uint64) error { return assert.AnError }
		_, err := m.Reserve(4 * kib)
		assert.ErrorIs(t, err, memory.ErrPoolCapacityExceeded)
		require.NoError(t, a.Release())
		require.NoError(t, b.Release())
	})
}

func TestSlicedCleanupRenumbers(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	a := reserve(t, m, 4*kib) // page 0
	b := reserve(t, m, 4*kib) // page 1
	keep, err := b.Binding()
	require.NoError(t, err)
	before := addr(t, m, b)
	require.NoError(t, a.Release())
	require.NoError(t, b.Release())

	m.Cleanup()
	assert.Equal(t, 1, st.Live(), "the free page went back")
	loc, err := m.Locate(keep)
	require.NoError(t, err)
	assert.Equal(t, uint32(0), loc.Page, "the surviving page moved down")
	r, err := m.Resource(keep)
	require.NoError(t, err)
	assert.Equal(t, before, r.Addr(), "the binding followed its slice")
	assert.Equal(t, 1, m.Report().Dynamic[0].Pages)
	assert.Equal(t, 2, m.Report().Dynamic[0].PagesPeak)
	require.NoError(t, keep.Release())
}

func TestSlicedPeriodicCleanupKeepsPages(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	for range 100 {
		h := reserve(t, m, kib)
		require.NoError(t, h.Release())
	}
	assert.Equal(t, 1, st.Live())
	assert.Equal(t, 1, st.Allocs, "steady state reuses the page")
}
