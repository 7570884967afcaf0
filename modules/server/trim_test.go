package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// serveOnStreams runs one request on each of streams goroutines, each on a stream id of
// its own, as a thread-per-request host does: two buffers of size bytes, a write, a
// launch, a read, both released. hold, when set, runs while every goroutine holds its
// buffers.
func serveOnStreams(t *testing.T, d *server.Device, streams int, size uint64, hold func()) {
	t.Helper()
	require.NoError(t, d.Compile(devScale))
	n := uint32(size / 4)
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	ready.Add(streams)
	for g := range streams {
		done.Go(func() {
			s := d.On(server.StreamID(1 + g))
			x, err := s.Alloc(size)
			require.NoError(t, err)
			y, err := s.Alloc(size)
			require.NoError(t, err)
			require.NoError(t, s.Write(x, make([]byte, size)))
			require.NoError(t, s.Launch(devScale, grid(int(n)), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.U32(n)}}))
			_, err = s.Read(y)
			require.NoError(t, err)
			ready.Done()
			<-release
			require.NoError(t, x.Release())
			require.NoError(t, y.Release())
		})
	}
	ready.Wait()
	if hold != nil {
		hold()
	}
	close(release)
	done.Wait()
}

// TestManyStreamsReserveLittle: many streams each holding a small buffer reserve a small
// page each, not a page of the device's smallest rung.
func TestManyStreamsReserveLittle(t *testing.T) {
	const streams, size = 32, 128 << 10
	d, _ := openDevice(t, server.Options{})
	serveOnStreams(t, d, streams, size, func() {
		u, err := d.MemoryUsage()
		require.NoError(t, err)
		t.Logf("%d streams: %d KiB in use, %d KiB reserved", streams, u.BytesInUse>>10, u.BytesReserved>>10)
		assert.LessOrEqual(t, u.BytesReserved, uint64(streams*2<<20), "more than one 2 MiB page a stream")
	})
}

// TestIdleStreamsGiveBackPages: once their goroutines released everything and went
// quiet, the streams' pools give their pages back without a Cleanup.
func TestIdleStreamsGiveBackPages(t *testing.T) {
	const streams, size = 16, 128 << 10
	d, _ := openDevice(t, server.Options{})
	serveOnStreams(t, d, streams, size, nil)
	u, err := d.MemoryUsage()
	require.NoError(t, err)
	require.Zero(t, u.NumberAllocs)
	require.NotZero(t, u.BytesReserved, "the pages are kept for the streams' next allocations")
	require.Eventually(t, func() bool {
		u, err = d.MemoryUsage()
		require.NoError(t, err)
		return u.BytesReserved == 0
	}, 10*time.Second, 20*time.Millisecond, "%d KiB reserved for nothing in use", u.BytesReserved>>10)
}

// TestBusyStreamKeepsPages: a stream that allocates and releases steadily keeps its page
// through the trims its releases arm.
func TestBusyStreamKeepsPages(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	s := d.On(3)
	deadline := time.Now().Add(1500 * time.Millisecond)
	var reserved uint64
	for time.Now().Before(deadline) {
		b, err := s.Alloc(64 << 10)
		require.NoError(t, err)
		require.NoError(t, b.Release())
		u, err := s.MemoryUsage()
		require.NoError(t, err)
		if reserved != 0 {
			require.Equal(t, reserved, u.BytesReserved, "the busy stream's page went")
		}
		reserved = u.BytesReserved
		time.Sleep(5 * time.Millisecond)
	}
}
