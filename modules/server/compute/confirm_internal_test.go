package compute

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The blame of a failure follows the device's order to a stream ordered after the
// failed one, for that stream's writes queued after the ordering: a buffer written
// there once before the ordering and again after it is taken (its last write may have
// used the failed work), one written only before it is not (it ran ahead of the wait,
// on bytes the failed work never touched). Judged by the first write instead of the
// last, the rewritten buffer would read as good: a silent wrong result where the device
// does not pass the failure on through the wait (a GPU whose failed wait was
// acknowledged before the other stream waited).
func TestTakeOrderedJudgesAWriteByItsLastPart(t *testing.T) {
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	s, err := New(p, Config{CacheDir: "-"})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	binding := func() Binding {
		h, err := s.Empty(4, 0)
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Release() })
		b, err := h.Binding()
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Release() })
		return b
	}
	rewritten, before := binding(), binding()
	// Two device streams the server only keeps state for: takeOrderedLocked reads the
	// states, never the platform.
	failed, other := s.watch.state(hipsys.Stream(0xf1)), s.watch.state(hipsys.Stream(0xf2))
	c := &s.points
	c.mu.Lock()
	failed.writes.record(binding(), c.mark()) // the failed work
	other.writes.record(rewritten, c.mark())
	other.writes.record(before, c.mark())
	c.mu.Unlock()
	s.orderedAfter(other, failed)
	c.mu.Lock()
	other.writes.record(rewritten, c.mark())
	// A launch loop merges a buffer's entries into one, its first write and its last
	// (unconfirmed.merge): the judgement must hold for that entry.
	other.writes.merge()
	require.Len(t, other.writes.writes, 2)
	took, taken := s.takeOrderedLocked(failed)
	c.mu.Unlock()

	require.Equal(t, []*streamState{other}, took)
	require.Len(t, taken, 1)
	ids := make([]any, 0, len(taken[0]))
	for _, b := range taken[0] {
		ids = append(ids, b.ID())
	}
	assert.Contains(t, ids, rewritten.ID(), "written after the ordering: its bytes may be the failed work's")
	assert.NotContains(t, ids, before.ID(), "written only before the ordering: untouched by the failed work")
}
