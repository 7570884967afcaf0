package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestPersistentWindowsNest(t *testing.T) {
	m, _ := newManager(t)
	steps := []struct {
		set  memory.Mode
		want memory.Mode
	}{
		{memory.ModePersistent, memory.ModePersistent},
		{memory.ModePersistent, memory.ModePersistent},
		{memory.ModeAuto, memory.ModePersistent},
		{memory.ModeAuto, memory.ModeAuto},
		{memory.ModeAuto, memory.ModeAuto}, // saturates
		{memory.ModePersistent, memory.ModePersistent},
	}
	for i, s := range steps {
		m.SetMode(s.set)
		assert.Equal(t, s.want, m.Mode(), "step %d", i)
	}
}

func TestPersistentPolicies(t *testing.T) {
	tests := []struct {
		policy  memory.PersistentPolicy
		initial memory.Mode
		afterOn memory.Mode
	}{
		{memory.PersistentEnabled, memory.ModeAuto, memory.ModePersistent},
		{memory.PersistentSizeMatch, memory.ModeAuto, memory.ModePersistent},
		{memory.PersistentDisabled, memory.ModeAuto, memory.ModeAuto},
		{memory.PersistentEnforced, memory.ModePersistent, memory.ModePersistent},
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			m, _ := newManager(t, memory.WithPersistentPolicy(tt.policy))
			assert.Equal(t, tt.initial, m.Mode())
			m.SetMode(memory.ModePersistent)
			assert.Equal(t, tt.afterOn, m.Mode())
			m.SetMode(memory.ModeAuto)
			m.SetMode(memory.ModeAuto)
			h := reserve(t, m, kib)
			want := uint8(1) // SubSlices' first sliced pool
			if tt.policy == memory.PersistentEnforced {
				want = memory.PersistentPool
			}
			assert.Equal(t, want, locate(t, m, h).Pool)
			require.NoError(t, h.Release())
		})
	}
}

func TestPersistentExactSizeBuckets(t *testing.T) {
	m, st := newManager(t)
	m.SetMode(memory.ModePersistent)
	a := reserve(t, m, 1000)
	assert.Equal(t, memory.PersistentPool, locate(t, m, a).Pool)
	where := addr(t, m, a)
	require.NoError(t, a.Release())
	b := reserve(t, m, 1024) // same aligned size
	assert.Equal(t, where, addr(t, m, b))
	c := reserve(t, m, 512) // smaller: a bucket of its own, never carved
	assert.NotEqual(t, where, addr(t, m, c))
	assert.Equal(t, 2, st.Live())
	require.NoError(t, b.Release())
	require.NoError(t, c.Release())
	assert.Equal(t, 2, m.Report().Persistent.Pages)
	m.Cleanup()
	assert.Equal(t, 0, m.Report().Persistent.Pages)
	assert.Equal(t, 0, st.Live())
}

func TestPersistentSizeMatch(t *testing.T) {
	m, _ := newManager(t, memory.WithPersistentPolicy(memory.PersistentSizeMatch))
	m.SetMode(memory.ModePersistent)
	p := reserve(t, m, 1000)
	m.SetMode(memory.ModeAuto)

	// Auto reservations of a size with a persistent bucket go there; the
	// bucket is busy, so it grows.
	q := reserve(t, m, 1010)
	assert.Equal(t, memory.PersistentPool, locate(t, m, q).Pool)
	other := reserve(t, m, 5000)
	assert.NotEqual(t, memory.PersistentPool, locate(t, m, other).Pool)
	for _, h := range []*memory.Handle{&p, &q, &other} {
		require.NoError(t, h.Release())
	}
}
