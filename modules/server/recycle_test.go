package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// TestRecycleKeepsOnlyAnIdleBuffer: Recycle keeps a buffer only when nothing of its past
// can reach its next use; every other buffer is released, exactly as by Release.
func TestRecycleKeepsOnlyAnIdleBuffer(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	require.NoError(t, d.Compile(devScale))
	in := upload(t, d.Stream, 1, 2, 3, 4)
	require.NoError(t, d.Sync())

	released := func(t *testing.T, b *server.Buffer) {
		t.Helper()
		assert.ErrorIs(t, b.Release(), server.ErrReleased, "Recycle released it")
	}
	kept := func(t *testing.T, b *server.Buffer) {
		t.Helper()
		// Still the caller's, and as usable as a fresh allocation.
		require.NoError(t, d.Write(b, floatBytes(5, 6, 7, 8)))
		assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, d.Stream, b))
		require.NoError(t, d.Launch(devScale, grid(4), server.Args{
			Buffers: []*server.Buffer{in, b}, Scalars: []server.Scalar{server.F32(3), server.U32(4)},
		}))
		assert.Equal(t, []float32{3, 6, 9, 12}, readFloats(t, d.Stream, b))
		require.NoError(t, b.Release())
	}
	recycle := func(t *testing.T, b *server.Buffer) bool {
		t.Helper()
		k, err := b.Recycle()
		require.NoError(t, err)
		return k
	}
	scale := func(t *testing.T, out *server.Buffer) {
		t.Helper()
		require.NoError(t, d.Launch(devScale, grid(4), server.Args{
			Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)},
		}))
	}

	t.Run("fresh", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		assert.True(t, recycle(t, b))
		kept(t, b)
	})
	t.Run("a launch output no wait confirmed", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		scale(t, b)
		assert.False(t, recycle(t, b), "a later failed wait would mark it")
		released(t, b)
	})
	t.Run("a write no wait confirmed", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		require.NoError(t, d.Write(b, floatBytes(1, 1, 1, 1)))
		assert.False(t, recycle(t, b))
		released(t, b)
	})
	t.Run("a launch output a sync confirmed", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		scale(t, b)
		require.NoError(t, d.Sync())
		assert.True(t, recycle(t, b))
		kept(t, b)
	})
	t.Run("carrying a failure", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
		scale(t, b)
		require.ErrorIs(t, d.Check(b), hipsys.ErrorLaunchFailure)
		require.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure, "the refused launch is reported by the Sync")
		require.NoError(t, d.Flush())
		assert.False(t, recycle(t, b), "its next life would read the failure of its last")
		released(t, b)
	})
	t.Run("held by a graph", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		g, err := d.Capture(func(s server.Stream) error {
			return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, b}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}})
		})
		require.NoError(t, err)
		require.NoError(t, d.Sync())
		require.NoError(t, d.Flush())
		assert.False(t, recycle(t, b), "a replay would write it")
		released(t, b)
		require.NoError(t, g.Destroy())
	})
	t.Run("released", func(t *testing.T) {
		b := alloc(t, d.Stream, 16)
		require.NoError(t, b.Release())
		_, err := b.Recycle()
		assert.ErrorIs(t, err, server.ErrReleased)
		var none *server.Buffer
		_, err = none.Recycle()
		assert.ErrorIs(t, err, server.ErrInvalidArgument)
	})
	// Last: foreign memory closes the device when the subtest ends.
	t.Run("imported", func(t *testing.T) {
		ptr := foreign(t, f, d, 64)
		var c counter
		b, err := d.Import(ptr, 16, c.release)
		require.NoError(t, err)
		assert.False(t, recycle(t, b), "the memory is another library's")
		released(t, b)
		require.NoError(t, d.Flush())
		waitCount(t, &c, 1)
	})
}

// TestRecycleAfterClose: the memory went with the device; Recycle keeps nothing.
func TestRecycleAfterClose(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	b, err := d.Alloc(16)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	k, err := b.Recycle()
	assert.NoError(t, err)
	assert.False(t, k)
	assert.ErrorIs(t, b.Release(), server.ErrReleased)
}
