package server_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// busyStream returns a stream of d and a spin count that keeps it busy for at least
// 300 ms, its kernel compiled, and out, the buffer the spin writes (its count of
// iterations, as a float).
func busyStream(t *testing.T, d *server.Device) (server.Stream, uint64, *server.Buffer) {
	t.Helper()
	s := d.On(3)
	out := alloc(t, s, 4)
	require.NoError(t, d.Compile(devSpin))
	n := uint64(1 << 20)
	for {
		t0 := time.Now()
		require.NoError(t, s.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n)))
		require.NoError(t, s.Sync())
		if time.Since(t0) >= 300*time.Millisecond || n >= 1<<40 {
			return s, n, out
		}
		n *= 4
	}
}

// spun is what dev_spin writes after n iterations: a float count, which stops growing
// at 2^24 (adding 1 to it rounds back).
func spun(n uint64) float32 { return float32(min(n, 1<<24)) }

const prompt = 150 * time.Millisecond // a cancelled call returns within this of the cancellation

// A Sync cancelled while it waits returns ctx.Err() promptly; the work finishes in the
// background and the buffer it writes ends as it would have.
func TestSyncContextCancelledMidSync(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	s, n, out := busyStream(t, d)
	require.NoError(t, s.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := s.SyncContext(ctx, out)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 30*time.Millisecond+prompt)
	require.NoError(t, s.Sync(out))
	got := make([]float32, 1)
	require.NoError(t, server.ReadSliceInto(s, got, out))
	assert.Equal(t, spun(n), got[0])
	require.NoError(t, s.SyncContext(context.Background()))
}

// A read cancelled while it waits returns ctx.Err() promptly and never writes dst,
// even after the read finishes in the background; the buffer reads right afterwards.
func TestReadContextCancelledMidRead(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	s, n, out := busyStream(t, d)
	require.NoError(t, s.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n)))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	dst := bytes.Repeat([]byte{0xAA}, 4)
	t0 := time.Now()
	err := s.ReadIntoContext(ctx, dst, out)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(t0), 30*time.Millisecond+prompt)
	require.NoError(t, s.Sync(out))
	assert.Equal(t, bytes.Repeat([]byte{0xAA}, 4), dst, "a cancelled read leaves dst as it was")
	require.NoError(t, d.Check(out))

	// Completed reads with a context that could be cancelled fill dst.
	got, err := s.ReadContext(context.Background(), out)
	require.NoError(t, err)
	assert.Equal(t, spun(n), math.Float32frombits(uint32(got[0])|uint32(got[1])<<8|uint32(got[2])<<16|uint32(got[3])<<24))
	live, stop := context.WithCancel(context.Background())
	defer stop()
	require.NoError(t, s.ReadAtContext(live, dst[:2], out, 2))
	assert.Equal(t, got[2:], dst[:2])
	assert.Equal(t, []byte{0xAA, 0xAA}, dst[2:])
}

// A profile's stop and a graph's destroy cancelled while they wait return ctx.Err();
// the graph is gone for the caller, and the device closes cleanly after both.
func TestProfileAndGraphWaitsCancelled(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	s, n, out := busyStream(t, d)
	p, err := s.StartProfile()
	require.NoError(t, err)
	require.NoError(t, s.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = p.StopContext(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = p.Stop()
	assert.ErrorIs(t, err, server.ErrReleased, "the window was closed by the cancelled stop")

	g, err := s.Capture(func(c server.Stream) error {
		return c.Call(devSpin, server.Dim3{X: 1, Y: 1, Z: 1}, out.Arg(), server.U64(n))
	})
	require.NoError(t, err)
	require.NoError(t, g.Replay())
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	t0 := time.Now()
	assert.ErrorIs(t, g.DestroyContext(ctx2), context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 30*time.Millisecond+prompt)
	assert.ErrorIs(t, g.Replay(), server.ErrReleased)
	require.NoError(t, s.Sync(out))
	got := make([]float32, 1)
	require.NoError(t, server.ReadSliceInto(s, got, out))
	assert.Equal(t, spun(n), got[0])
}

// A context already done queues nothing: the buffers are as they were.
func TestContextDoneBeforeTheCall(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst := []byte{7, 7}
	assert.ErrorIs(t, d.ReadIntoContext(ctx, dst, x), context.Canceled)
	assert.Equal(t, []byte{7, 7}, dst)
	assert.ErrorIs(t, d.SyncContext(ctx, x), context.Canceled)
	assert.ErrorIs(t, d.CompileContext(ctx, devScale), context.Canceled)
	p, err := d.StartProfile()
	require.NoError(t, err)
	_, err = p.StopContext(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = p.Stop()
	assert.ErrorIs(t, err, server.ErrReleased, "abandoned")
	assert.Equal(t, []float32{1, 2}, readFloats(t, d.Stream, x))
}

// A compile cancelled while it runs returns at once; it finishes in the background and
// the kernel launches.
func TestCompileContextCancelledMidCompile(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	k := server.NewKernel(fmt.Sprintf("%s\n// %d\n", devSource, time.Now().UnixNano()), "dev_inc", devBlock, []server.Access{server.ReadWrite})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := d.CompileContext(ctx, k)
	if err == nil {
		t.Skip("the compile finished within 5 ms (a warm cache): nothing to cancel")
	}
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 5*time.Millisecond+prompt)
	x := upload(t, d.Stream, 1, 2)
	require.NoError(t, d.Call(k, grid(2), x.Arg(), server.U32(2)))
	assert.Equal(t, []float32{2, 3}, readFloats(t, d.Stream, x))
	require.NoError(t, d.CompileContext(context.Background(), k))
}
