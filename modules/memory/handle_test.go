package memory_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

func TestRefCounts(t *testing.T) {
	m, _ := newManager(t)
	h := reserve(t, m, kib)
	assert.True(t, h.CanMut(), "one user handle")
	assert.True(t, h.Sole(), "one user handle")

	b, err := h.Binding()
	require.NoError(t, err)
	assert.True(t, h.CanMut(), "bindings do not count against can_mut")
	assert.False(t, h.Sole(), "a binding holds the allocation too")

	c, err := h.Clone()
	require.NoError(t, err)
	assert.False(t, h.CanMut(), "two owners")
	assert.False(t, h.Sole(), "two owners")
	assert.Equal(t, h.ID(), c.ID())

	require.NoError(t, c.Release())
	assert.True(t, h.CanMut())
	assert.False(t, c.Valid())
	assert.False(t, c.Sole(), "a released handle")
	assert.ErrorIs(t, c.Release(), memory.ErrReleased)

	require.NoError(t, h.Release())
	assert.False(t, h.Sole(), "a released handle")
	assert.Equal(t, uint64(1), m.Usage().NumberAllocs, "the binding keeps the slice busy")
	require.NoError(t, b.Release())
	assert.Equal(t, uint64(0), m.Usage().NumberAllocs)

	// Bindings given back: the handle is alone again.
	h = reserve(t, m, kib)
	b, err = h.Binding()
	require.NoError(t, err)
	require.NoError(t, b.Release())
	assert.True(t, h.Sole())
	require.NoError(t, h.Release())
}

func TestNarrowAccumulates(t *testing.T) {
	m, _ := newManager(t)
	h := reserve(t, m, 1024)
	base := addr(t, m, h)
	tests := []struct {
		start, end uint64
		wantErr    bool
		wantStart  uint64
		wantUsed   uint64
	}{
		{start: 16, end: 8, wantStart: 16, wantUsed: 1000},
		{start: 100, end: 0, wantStart: 116, wantUsed: 900},
		{start: 901, end: 0, wantErr: true, wantStart: 116, wantUsed: 900},
		{start: 450, end: 451, wantErr: true, wantStart: 116, wantUsed: 900},
		{start: ^uint64(0), end: ^uint64(0), wantErr: true, wantStart: 116, wantUsed: 900},
		{start: 0, end: 900, wantStart: 116, wantUsed: 0},
	}
	for _, tt := range tests {
		err := h.Narrow(tt.start, tt.end)
		if tt.wantErr {
			assert.ErrorIs(t, err, memory.ErrOutOfRange)
		} else {
			assert.NoError(t, err)
		}
		start, _ := h.Offsets()
		assert.Equal(t, tt.wantStart, start)
		assert.Equal(t, tt.wantUsed, h.SizeInUse())
	}
	b, err := h.Binding()
	require.NoError(t, err)
	r, err := m.Resource(b)
	require.NoError(t, err)
	assert.Equal(t, base+116, r.Addr())
	assert.Equal(t, uint64(0), r.Size)
	require.NoError(t, b.Release())
	require.NoError(t, h.Release())
}

func TestReleaseConcurrentSafe(t *testing.T) {
	m, _ := newManager(t)
	h := reserve(t, m, kib)
	var refs []memory.Binding
	for range 64 {
		b, err := h.Binding()
		require.NoError(t, err)
		refs = append(refs, b)
	}
	var wg sync.WaitGroup
	for i := range refs {
		wg.Go(func() { assert.NoError(t, refs[i].Release()) })
	}
	wg.Wait()
	require.NoError(t, h.Release())
	assert.Equal(t, uint64(0), m.Usage().NumberAllocs)
}

func TestLeakReport(t *testing.T) {
	leaks := make(chan memory.Leak, 4)
	m, _ := newManager(t, memory.WithLeakReport(func(l memory.Leak) { leaks <- l }))
	id := func() memory.ID {
		h := reserve(t, m, 3*kib)
		kept := reserve(t, m, kib)
		require.NoError(t, kept.Release()) // released: never reported
		return h.ID()                      // h is dropped without Release
	}()
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case l := <-leaks:
			assert.Equal(t, id, l.ID)
			assert.Equal(t, uint64(3*kib), l.Size)
			assert.Equal(t, "handle", l.Kind)
			assert.Equal(t, uint64(1), m.Usage().NumberAllocs, "the report does not free the slice")
			return
		case <-deadline:
			t.Fatal("leak not reported")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
