package memory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

// BenchmarkReserveRelease is the pool's hot path: reserve 1 MiB through the
// default layout over the fake storage and release it, in steady state.
// Budget: 150 ns and 0 allocations per pair.
func BenchmarkReserveRelease(b *testing.B) {
	for _, bc := range []struct {
		name   string
		layout memory.Layout
	}{
		{"SubSlices", memory.Layout{Preset: memory.SubSlices}},
		{"ExclusivePages", memory.Layout{Preset: memory.ExclusivePages}},
		{"Persistent", memory.Layout{Preset: memory.SubSlices}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, _ := newManager(b, memory.WithLayout(bc.layout))
			if bc.name == "Persistent" {
				m.SetMode(memory.ModePersistent)
			}
			// A neighbour stays live so the page is never empty, as in a
			// real step.
			keep := reserve(b, m, 64*kib)
			defer keep.Release()
			b.ReportAllocs()
			for b.Loop() {
				h, err := m.Reserve(mib)
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Release(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pair")
		})
	}
}

func TestReserveReleaseAllocatesNothing(t *testing.T) {
	m, _ := newManager(t)
	warm := reserve(t, m, mib)
	require.NoError(t, warm.Release())
	allocs := testing.AllocsPerRun(1000, func() {
		h, err := m.Reserve(mib)
		if err != nil {
			t.Fatal(err)
		}
		_ = h.Release()
		b := m.NewHandle(kib)
		r, _ := m.Reserve(kib)
		_ = m.Bind(&r, b, 1)
		_, _ = m.HandleResource(b)
		_ = b.Release()
	})
	assert.Zero(t, allocs)
}
