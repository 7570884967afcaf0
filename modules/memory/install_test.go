package memory_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
)

// The HIP test pools_reconfigure_in_place, on the fake storage.
func TestPoolsReconfigureInPlace(t *testing.T) {
	m, _ := newManager(t)
	require.NoError(t, m.InstallLayout(memory.Explicit(memory.SlicedSpec{PageSize: 8 * mib, MaxPoolSize: 16 * mib})))
	a, b := reserve(t, m, 8*mib), reserve(t, m, 8*mib)
	_, err := m.Reserve(8 * mib)
	assert.ErrorIs(t, err, memory.ErrPoolCapacityExceeded)
	require.NoError(t, a.Release())
	require.NoError(t, b.Release())
	m.Cleanup()

	require.NoError(t, m.InstallLayout(memory.Explicit(memory.SlicedSpec{PageSize: 16 * mib, MaxPoolSize: 64 * mib})))
	var hs []memory.Handle
	for range 4 {
		hs = append(hs, reserve(t, m, 16*mib))
	}
	rep := m.Report()
	require.Len(t, rep.Dynamic, 1)
	assert.Equal(t, 4, rep.Dynamic[0].Pages)
	assert.Equal(t, 4, rep.Dynamic[0].PagesPeak, "peaks restart with the new layout")
	for i := range hs {
		require.NoError(t, hs[i].Release())
	}
}

func TestInstallInvalidLayoutChangesNothing(t *testing.T) {
	m, _ := newManager(t)
	before := m.Layout()
	err := m.InstallLayout(memory.Explicit(memory.SlicedSpec{PageSize: kib, MaxSliceSize: 2 * kib}))
	assert.ErrorIs(t, err, memory.ErrInvalidLayout)
	assert.Equal(t, before, m.Layout())
}

func TestInstallKeepsPersistentPool(t *testing.T) {
	m, _ := newManager(t)
	m.SetMode(memory.ModePersistent)
	p := reserve(t, m, kib)
	m.SetMode(memory.ModeAuto)
	require.NoError(t, m.InstallLayout(memory.Layout{Preset: memory.ExclusivePages}), "persistent memory does not block")
	_, err := m.HandleResource(p)
	assert.NoError(t, err)
	require.NoError(t, p.Release())
}

func TestCapacityWarningOncePerPoolPerLayout(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	layout := memory.Explicit(memory.SlicedSpec{PageSize: 4 * kib, MaxPoolSize: 4 * kib}, memory.DirectSpec{})
	m, _ := newManager(t, memory.WithLayout(layout), memory.WithLogger(log))
	var hs []memory.Handle
	for range 4 {
		hs = append(hs, reserve(t, m, 4*kib)) // the last three spill
	}
	assert.Equal(t, 1, strings.Count(buf.String(), "at capacity"))
	for i := range hs {
		require.NoError(t, hs[i].Release())
	}
	require.NoError(t, m.InstallLayout(layout))
	a, b := reserve(t, m, 4*kib), reserve(t, m, 4*kib)
	assert.Equal(t, 2, strings.Count(buf.String(), "at capacity"), "a new layout warns again")
	require.NoError(t, a.Release())
	require.NoError(t, b.Release())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The manager's goroutine reserves while another goroutine releases, as a
// stream actor and its users do.
func TestReleaseWhileReservingConcurrentSafe(t *testing.T) {
	m, _ := newManager(t)
	handles := make(chan memory.Handle, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for h := range handles {
			b, err := h.Binding()
			assert.NoError(t, err)
			assert.NoError(t, b.Release())
			assert.NoError(t, h.Release())
		}
	}()
	for i := range 5000 {
		h, err := m.Reserve(uint64(1 + i%7*kib))
		require.NoError(t, err)
		handles <- h
		if i%500 == 0 {
			m.Cleanup()
		}
	}
	close(handles)
	<-done
	assert.Equal(t, uint64(0), m.Usage().NumberAllocs)
}
