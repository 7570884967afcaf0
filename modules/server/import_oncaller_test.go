package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// TestImportReleaseOnCaller: with ReleaseOnCaller, the release of an import whose
// stream has nothing queued runs before Release returns, on the releasing goroutine,
// with the Device's lock free (the release calls back into the Device); with work still
// queued on the memory it waits for that work, on a goroutine of the Device's, as
// without the option.
func TestImportReleaseOnCaller(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	ptr := foreign(t, f, d, 64)

	// Drained: run by Release itself.
	var c counter
	calledBack := make(chan error, 1)
	b, err := d.Import(ptr, 16, func() {
		c.release()
		_, err := d.MemoryUsage() // takes the Device's lock: no deadlock
		calledBack <- err
	}, server.ReleaseOnCaller)
	require.NoError(t, err)
	require.NoError(t, d.Stream.Write(b, floatBytes(1, 2, 3, 4)))
	require.NoError(t, d.Sync())
	require.NoError(t, b.Release())
	assert.Equal(t, int32(1), c.n.Load(), "the release ran before Release returned")
	require.NoError(t, <-calledBack)
	waitCount(t, &c, 1)

	// Work still queued on the memory: the release waits for it.
	s, n, _ := busyStream(t, d)
	var late counter
	b2, err := s.Import(ptr+16, 16, late.release, server.ReleaseOnCaller)
	require.NoError(t, err)
	require.NoError(t, s.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, b2.Arg(), server.U64(n)))
	t0 := time.Now()
	require.NoError(t, b2.Release())
	assert.Zero(t, late.n.Load(), "the spin still uses the memory")
	assert.Less(t, time.Since(t0), 100*time.Millisecond, "Release does not wait for the work")
	waitCount(t, &late, 1)
	raw := make([]byte, 4)
	require.NoError(t, f.MemcpyDtoH(raw, ptr+16))
	assert.Equal(t, spun(n), byteFloats(raw)[0], "the release came after the spin's write")

	// Recycle of an import releases it the same way.
	var r counter
	b3, err := d.Import(ptr+32, 16, r.release, server.ReleaseOnCaller)
	require.NoError(t, err)
	kept, err := b3.Recycle()
	require.NoError(t, err)
	assert.False(t, kept)
	assert.Equal(t, int32(1), r.n.Load())
}
