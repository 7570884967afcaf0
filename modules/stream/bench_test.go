package stream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/stream"
)

// ownBindings returns n bindings homed on stream id, after one write scope each on that
// stream (so their last write is on it too).
func ownBindings(b testing.TB, m *stream.MultiStream, id stream.ID, n int) []stream.Binding {
	bs := make([]stream.Binding, n)
	for i := range bs {
		bs[i] = newDeviceBuffer(b, m, id, 256).b
		require.NoError(b, m.Over(id, bs[i:i+1]).Execute(func() error { return nil }))
	}
	return bs
}

// BenchmarkResolveSameStream resolves (and closes) a command whose four buffers all live
// on its own stream: the path of nearly every launch. Budget: 100 ns, 0 allocations.
func BenchmarkResolveSameStream(b *testing.B) {
	p := openCPU(b)
	m := newMulti(b, p)
	bs := ownBindings(b, m, 3, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := m.Resolve(3, bs)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/resolve")
}

// BenchmarkEnsureWritten checks 8 clean bindings. "empty" is the steady state (every
// scope settled); "others-failed" has 64 other allocations carrying failures, so each
// binding is looked up. Budget: 100 ns.
func BenchmarkEnsureWritten(b *testing.B) {
	hb := newHostBuffers(b)
	clean := make([]stream.Binding, 8)
	for i := range clean {
		clean[i] = hb.binding(0, 64)
	}
	bench := func(b *testing.B, m *stream.MultiStream) {
		b.ReportAllocs()
		for b.Loop() {
			if err := m.EnsureWritten(clean...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/check")
	}
	b.Run("empty", func(b *testing.B) { bench(b, newMulti(b, nil)) })
	b.Run("others-failed", func(b *testing.B) {
		m := newMulti(b, nil)
		for range 64 {
			m.Taint(errBoom, hb.binding(0, 64))
		}
		bench(b, m)
	})
}

// BenchmarkInfoCacheHit looks up 12 info words already cached. Budget: 100 ns, 0
// allocations.
func BenchmarkInfoCacheHit(b *testing.B) {
	hb := newHostBuffers(b)
	c := stream.NewInfoCache(stream.DefaultInfoPolicy)
	words := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for i := range 100 { // a realistic population around the hit
		h, err := hb.mgr.Reserve(96)
		require.NoError(b, err)
		w := append([]uint64{uint64(i + 100)}, words[1:]...)
		c.Lookup(stream.CacheNormal, w)
		c.Store(w, h)
	}
	h, err := hb.mgr.Reserve(96)
	require.NoError(b, err)
	c.Store(words, h)
	b.ReportAllocs()
	for b.Loop() {
		if !c.Lookup(stream.CacheNormal, words).Hit {
			b.Fatal("miss")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/lookup")
}

// TestHotPathsAllocateNothing pins the zero-allocation budgets outside the benchmarks.
func TestHotPathsAllocateNothing(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	bs := ownBindings(t, m, 3, 4)
	s, err := m.Stream(3)
	require.NoError(t, err)
	words := []uint64{7, 8, 9}
	h, err := s.GPU.Reserve(24)
	require.NoError(t, err)
	s.Info.Lookup(stream.CacheNormal, words)
	s.Info.Store(words, h)

	assert.Zero(t, testing.AllocsPerRun(100, func() {
		r, _ := m.Resolve(3, bs)
		_ = r.Close()
	}), "resolve")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.EnsureWritten(bs...) }), "ensure-written")
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.Info.Lookup(stream.CacheNormal, words) }), "info hit")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = m.Launching(3, bs[:2], bs[2:]).Execute(func() error { return nil })
	}), "a settled launch scope")
}

// BenchmarkLaunchScope is a launch's scope that settles: input check, claim, body,
// release, write marks. Not budgeted on its own; it is part of every launch.
func BenchmarkLaunchScope(b *testing.B) {
	p := openCPU(b)
	m := newMulti(b, p)
	bs := ownBindings(b, m, 3, 4)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Launching(3, bs[:2], bs[2:]).Execute(func() error { return nil })
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/scope")
}
