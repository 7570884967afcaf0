package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestCapturePrimingRetainsWorkingSet(t *testing.T) {
	m, _ := newManager(t)
	m.CaptureBegin()
	assert.Equal(t, memory.ModePersistent, m.Mode())
	for range 3 {
		h := reserve(t, m, 4*kib) // released at once, yet retained
		require.NoError(t, h.Release())
	}
	assert.Equal(t, 3, m.Report().Persistent.Pages, "the pool grows to the working set")
	m.CapturePrimingEnd()
	assert.Equal(t, uint64(0), m.Usage().NumberAllocs, "retention dropped; slices stay")
	assert.Equal(t, 3, m.Report().Persistent.Pages)

	h := reserve(t, m, 4*kib) // the capture run reuses a warmed slice
	require.NoError(t, h.Release())
	graph := m.CaptureEnd()
	assert.Len(t, graph, 3, "every touched slice is pinned by the graph")
	assert.Equal(t, memory.ModeAuto, m.Mode())

	// Pinned slices are never handed to new allocations.
	m.SetMode(memory.ModePersistent)
	fresh := reserve(t, m, 4*kib)
	assert.Equal(t, 4, m.Report().Persistent.Pages)
	for i := range graph {
		require.NoError(t, graph[i].Release())
	}
	require.NoError(t, fresh.Release())
}

func TestCaptureTouchesOnlyItsSlices(t *testing.T) {
	m, _ := newManager(t)
	m.SetMode(memory.ModePersistent)
	pre := reserve(t, m, kib)       // touched: reused in the capture
	untouched := reserve(t, m, kib) // never used in the capture
	require.NoError(t, pre.Release())
	m.SetMode(memory.ModeAuto)

	m.CaptureBegin()
	m.CaptureBegin() // re-entrant
	m.CapturePrimingEnd()
	client := m.NewHandle(kib)
	reserved := reserve(t, m, kib) // reuses pre's slice
	require.NoError(t, m.Bind(&reserved, client, 0))
	graph := m.CaptureEnd()
	require.Len(t, graph, 1)
	assert.Equal(t, client.ID(), graph[0].ID(), "touched under its final identity")
	assert.Equal(t, memory.ModeAuto, m.Mode())
	require.NoError(t, graph[0].Release())
	require.NoError(t, client.Release())
	require.NoError(t, untouched.Release())
	assert.Nil(t, m.CaptureEnd(), "no capture open")
}

func TestCaptureDefersModeAndCleanup(t *testing.T) {
	m, st := newManager(t, explicit(memory.SlicedSpec{PageSize: 4 * kib}))
	h := reserve(t, m, kib)
	require.NoError(t, h.Release())
	m.CaptureBegin()
	flushes := st.Flushes
	m.SetMode(memory.ModePersistent)
	assert.Equal(t, memory.ModePersistent, m.Mode())
	m.Cleanup()
	assert.Equal(t, 1, st.Live(), "no cleanup while capturing")
	x := reserve(t, m, 2*kib)
	assert.Equal(t, flushes, st.Flushes, "no storage flush while capturing")
	graph := m.CaptureEnd()
	assert.Equal(t, memory.ModePersistent, m.Mode(), "the mode set during the capture applies now")
	require.NoError(t, x.Release())
	for i := range graph {
		require.NoError(t, graph[i].Release())
	}
	m.Cleanup()
	assert.Equal(t, 0, st.Live())
}

func TestCaptureEndWithoutPrimingEnd(t *testing.T) {
	m, _ := newManager(t)
	m.CaptureBegin()
	h := reserve(t, m, kib)
	require.NoError(t, h.Release())
	graph := m.CaptureEnd()
	require.Len(t, graph, 1)
	require.NoError(t, graph[0].Release())
	assert.Equal(t, uint64(0), m.Usage().NumberAllocs, "priming retention dropped at the end")
}
