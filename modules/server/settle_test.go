package server_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// lendAndRelease runs rounds of one buffer of stream 0 released by four goroutines at
// once while eight others, each on a stream of its own, launch with it and read what the
// launch wrote: every launch that won the race borrows the buffer for its stream's work,
// and those borrowings wait for a fence the borrowing stream records later.
func lendAndRelease(t *testing.T, d *server.Device, rounds int) {
	t.Helper()
	const n = 256
	require.NoError(t, d.Compile(devScale))
	for range rounds {
		in := upload(t, d.Stream, make([]float32, n)...)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				s := d.On(server.StreamID(1 + g))
				out, err := s.Alloc(4 * n)
				if !assert.NoError(t, err) {
					return
				}
				defer out.Release()
				err = s.Launch(devScale, grid(n), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(n)}})
				if err != nil {
					assert.ErrorIs(t, err, server.ErrReleased)
					return
				}
				_, err = s.Read(out)
				assert.NoError(t, err)
			})
		}
		for range 4 {
			wg.Go(func() {
				if err := in.Release(); err != nil {
					assert.ErrorIs(t, err, server.ErrReleased)
				}
			})
		}
		wg.Wait()
	}
}

// TestSyncAndCleanupSettleBorrowings: once every buffer is released, a device-wide Sync
// and Cleanup leave nothing in use, whichever streams borrowed the buffers and however
// few commands they ran since.
func TestSyncAndCleanupSettleBorrowings(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	lendAndRelease(t, d, 200)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Cleanup())
	u, err := d.MemoryUsage()
	require.NoError(t, err)
	assert.Zero(t, u.NumberAllocs, "allocations in use after Sync and Cleanup: %d bytes", u.BytesInUse)
	assert.Zero(t, u.BytesInUse)
}

// borrowOnce launches on stream 1 with x, a buffer of stream 0, reads the launch's
// output back (so the launch is done) and releases x and the output: only stream 1's
// hold, waiting for a fence, keeps x in stream 0's pool.
func borrowOnce(t *testing.T, d *server.Device, before ...func(server.Stream)) {
	t.Helper()
	const n = 256
	require.NoError(t, d.Compile(devScale))
	x := upload(t, d.Stream, make([]float32, n)...)
	s := d.On(1)
	out := alloc(t, s, 4*n)
	for _, f := range before {
		f(s)
	}
	require.NoError(t, s.Launch(devScale, grid(n), server.Args{Buffers: []*server.Buffer{x, out}, Scalars: []server.Scalar{server.F32(2), server.U32(n)}}))
	require.NoError(t, x.Release())
	require.NoError(t, out.Release())
}

// TestSyncReturnsFinishedBorrowings: a Sync, of any stream, gives back what the streams
// with nothing left to run borrowed, so a released buffer's memory is free once the work
// that used it is done and the program waited.
func TestSyncReturnsFinishedBorrowings(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	borrowOnce(t, d)
	require.NoError(t, d.On(1).Sync())
	require.NoError(t, d.Sync())
	u, err := d.Stream.MemoryUsage() // stream 0's pools, where the buffer lives
	require.NoError(t, err)
	assert.Zero(t, u.NumberAllocs, "the buffer stream 1 used and finished with is still in use after Sync: %d bytes", u.BytesInUse)
}

// TestMemoryUsageReturnsFinishedBorrowings: the device's usage counts a released buffer
// only while work that used it may still run.
func TestMemoryUsageReturnsFinishedBorrowings(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	borrowOnce(t, d)
	require.NoError(t, d.On(1).Sync())
	u, err := d.MemoryUsage()
	require.NoError(t, err)
	assert.Zero(t, u.NumberAllocs, "%d bytes in use once every buffer was released and every stream finished", u.BytesInUse)
}

// TestCleanupWaitsForBorrowings: Cleanup gives back a released buffer that another
// stream's work still uses once that work is done, and then its page, whatever that
// stream does afterwards.
func TestCleanupWaitsForBorrowings(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	require.NoError(t, d.Compile(devSpin))
	spin := alloc(t, d.On(1), 4)
	borrowOnce(t, d, func(s server.Stream) {
		// Keep stream 1 busy, so that its launch with the buffer is still queued at the
		// cleanup.
		require.NoError(t, s.Launch(devSpin, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{Buffers: []*server.Buffer{spin}, Scalars: []server.Scalar{server.U64(1 << 26)}}))
	})
	require.NoError(t, d.Cleanup())
	u, err := d.Stream.MemoryUsage()
	require.NoError(t, err)
	assert.Zero(t, u.NumberAllocs, "the buffer stream 1 used is still in use after Cleanup: %d bytes", u.BytesInUse)
	assert.Zero(t, u.BytesReserved, "stream 0's page is kept after Cleanup")
}
