package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestDryRunPagesAreLazy(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 64 * kib}))
	m.SetDryRun(true)
	a := reserve(t, m, kib)
	b := reserve(t, m, kib)
	m.SetMode(memory.ModePersistent)
	p := reserve(t, m, 3*kib)
	m.SetMode(memory.ModeAuto)
	m.SetDryRun(false)
	assert.Equal(t, 0, st.Allocs, "nothing allocated for a dry run")
	rep := m.Report()
	assert.Equal(t, 1, rep.Dynamic[0].PagesUnmapped)
	assert.Equal(t, 1, rep.Persistent.PagesUnmapped)
	assert.Equal(t, uint64(64*kib+3*kib), m.Usage().BytesReserved, "planning counts lazy pages")

	// First use maps the whole page once.
	ra, err := m.HandleResource(a)
	require.NoError(t, err)
	rb, err := m.HandleResource(b)
	require.NoError(t, err)
	assert.Equal(t, ra.Addr()+kib, rb.Addr())
	assert.Equal(t, 1, st.Allocs)
	_, err = m.HandleResource(p)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Allocs)
	assert.Equal(t, 0, m.Report().Dynamic[0].PagesUnmapped)

	for _, h := range []*memory.Handle{&a, &b, &p} {
		require.NoError(t, h.Release())
	}
}

func TestMaterializeFailure(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 64 * kib}))
	m.SetDryRun(true)
	h := reserve(t, m, kib)
	st.FailAlloc = func(uint64) error { return assert.AnError }
	_, err := m.HandleResource(h)
	var me *memory.MappingError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, memory.ErrStorageMappingFailed)
	assert.ErrorIs(t, err, assert.AnError)
	assert.Equal(t, uint64(64*kib), me.Size)
	st.FailAlloc = nil
	_, err = m.HandleResource(h)
	assert.NoError(t, err, "the page stays lazy and can be mapped later")
	require.NoError(t, h.Release())
	m.Cleanup()
	assert.Equal(t, 0, st.Live())
}

func TestCleanupOfLazyPagesFreesNothing(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 64 * kib}))
	m.SetDryRun(true)
	h := reserve(t, m, kib)
	require.NoError(t, h.Release())
	m.Cleanup()
	assert.Equal(t, 0, st.Deallocs)
	assert.Equal(t, 0, m.Report().Dynamic[0].Pages)
}
