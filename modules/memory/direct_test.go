package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestDirectExactReuse(t *testing.T) {
	m, st := newManager(t, explicit(memory.DirectSpec{}))
	a := reserve(t, m, 1000) // effective 1024
	where := addr(t, m, a)
	require.NoError(t, a.Release())
	b := reserve(t, m, 1020) // same effective size: reused
	assert.Equal(t, where, addr(t, m, b))
	c := reserve(t, m, 2000) // different: a new allocation
	assert.Equal(t, 2, st.Live())
	require.NoError(t, b.Release())
	require.NoError(t, c.Release())

	for range 10 {
		h := reserve(t, m, 3000)
		require.NoError(t, h.Release())
	}
	assert.Equal(t, 3, st.Live(), "periodic cleanup never frees direct allocations")
	m.Cleanup()
	assert.Equal(t, 0, st.Live())
	assert.Equal(t, 0, m.Report().Dynamic[0].Pages)
	assert.Equal(t, 3, m.Report().Dynamic[0].PagesPeak)
}

func TestDirectReclaimWatermark(t *testing.T) {
	m, st := newManager(t, explicit(memory.DirectSpec{ReclaimAt: 4 * kib}))
	a, b, c := reserve(t, m, kib), reserve(t, m, kib), reserve(t, m, kib)
	require.NoError(t, a.Release())
	require.NoError(t, b.Release())
	// 3 KiB reserved; a 2 KiB request passes the 4 KiB watermark: free
	// slots go back in index order until it fits (a alone suffices).
	d := reserve(t, m, 2*kib)
	assert.Equal(t, 3, st.Live()-st.Pending(), "a freed, b kept, d added")
	assert.Equal(t, uint32(0), locate(t, m, d).Page, "the tombstone of a is reused")
	// A watermark, not a budget: nothing free is left, it grows anyway.
	e := reserve(t, m, 4*kib)
	assert.Equal(t, uint64(7*kib), m.Usage().BytesInUse)
	assert.Equal(t, uint64(7*kib), m.Usage().BytesReserved, "e reclaimed b, then grew past the mark")
	for _, h := range []*memory.Handle{&c, &d, &e} {
		require.NoError(t, h.Release())
	}
}

// An exact pool allocates each reservation at its own size: the storage sees 1000 bytes,
// not the aligned 1024, and a released allocation is reused only for that very size.
func TestDirectExactSizes(t *testing.T) {
	m, st := newManager(t, explicit(memory.DirectSpec{Exact: true}))
	a := reserve(t, m, 1000)
	assert.Equal(t, uint64(1000), m.Usage().BytesReserved)
	where := addr(t, m, a)
	require.NoError(t, a.Release())
	b := reserve(t, m, 1020) // same aligned size, another exact one: a new allocation
	assert.NotEqual(t, where, addr(t, m, b))
	assert.Equal(t, 2, st.Live())
	require.NoError(t, b.Release())
	assert.Contains(t, memory.DirectSpec{Exact: true}.String(), "exact")
}
