package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// A Sync of a stream that records a capture is refused, naming the recording: the
// recorded work has not run, so a nil would claim it had. The capture goes on: the
// graph holds the recorded launch, and a Sync after the replay waits for it.
func TestSyncDuringARecordingIsRefused(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	require.NoError(t, e.srv.Sync(nil, 0).Wait(), "the warm-up runs for real: a Sync waits for it")
	require.NoError(t, e.srv.BeginCapture(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	err := e.srv.Sync(nil, 0).Wait()
	require.ErrorIs(t, err, stream.ErrGraphState)
	assert.ErrorContains(t, err, "records a capture")
	require.NoError(t, e.srv.Sync(nil, 1).Wait(), "another stream syncs as ever")
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err, "the refused Sync left the capture intact")
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(out, 16), Data: make([]byte, 16)}}, 0).Wait()
	require.NoError(t, e.srv.Replay(g, 0))
	require.NoError(t, e.srv.Sync([]compute.Binding{out}, 0).Wait())
	assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4), "the graph holds the launch recorded before the refused Sync")
	e.srv.GraphDestroy(g, 0)
}

// A LaunchMode other than Execute and DryRun is refused with ErrInvalidArgument naming
// it; nothing runs and no buffer is touched (the output keeps its bytes and carries no
// failure).
func TestUnknownLaunchModeIsRefused(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.floats(0, 9, 9, 9, 9)
	launch(t, e.srv, addOne, 4, 0, in, out) // compiled: the refusal is the mode's
	require.NoError(t, e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(out, 16), Data: f32bytes(9, 9, 9, 9)}}, 0).Wait())
	for _, mode := range []compute.LaunchMode{2, 7, 255} {
		err := e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(4)}}, 0, mode)
		require.ErrorIs(t, err, compute.ErrInvalidArgument, "mode %d", mode)
		assert.ErrorContains(t, err, "unknown launch mode")
	}
	require.NoError(t, e.srv.Check([]compute.Binding{out}, 0))
	assert.Equal(t, []float32{9, 9, 9, 9}, e.mustRead(0, out, 4))
}

// A descriptor whose element count, byte count, pitch or device span overflows 64 bits
// is refused by Read and Write with ErrUnsupportedStrides naming its shape, before
// anything is queued: wrapped, each of these describes a small copy that passes the
// bounds check (a [2^62, 4] f32 read would be 0 bytes and return no error). A refused
// read leaves its buffer as it was; a refused write leaves its destination carrying the
// refusal, as every write that fails does.
func TestShapeWhoseSizeOverflowsIsRefused(t *testing.T) {
	e := newEnv(t)
	var b compute.Binding
	for _, c := range []struct {
		name string
		d    compute.CopyDescriptor
		what string
	}{
		{"element count", compute.CopyDescriptor{Binding: b, Shape: []int{1 << 62, 4}, Strides: []int{4, 1}, ElemSize: 1}, "element count"},
		{"byte count", compute.CopyDescriptor{Binding: b, Shape: []int{1 << 62, 4}, Strides: []int{4, 1}, ElemSize: 4}, "element count"},
		{"bytes of a row", compute.CopyDescriptor{Binding: b, Shape: []int{1 << 62}, Strides: []int{1}, ElemSize: 8}, "row size"},
		{"rows × row", compute.CopyDescriptor{Binding: b, Shape: []int{1 << 32, 1 << 30}, Strides: []int{1 << 30, 1}, ElemSize: 8}, "byte count"},
		{"pitch", compute.CopyDescriptor{Binding: b, Shape: []int{2, 1}, Strides: []int{1 << 62, 1}, ElemSize: 8}, "row pitch"},
		{"span", compute.CopyDescriptor{Binding: b, Shape: []int{5, 1}, Strides: []int{1 << 61, 1}, ElemSize: 4}, "device span"},
		{"rank 3", compute.CopyDescriptor{Binding: b, Shape: []int{1 << 40, 1 << 40, 1}, Strides: []int{1 << 40, 1, 1}, ElemSize: 4}, "element count"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b = e.floats(0, 1, 2, 3, 4)
			c.d.Binding = b
			_, err := e.srv.Read([]compute.CopyDescriptor{c.d}, 0).Wait()
			require.ErrorIs(t, err, compute.ErrUnsupportedStrides)
			assert.ErrorContains(t, err, "overflows 64 bits")
			assert.ErrorContains(t, err, c.what)
			assert.Equal(t, []float32{1, 2, 3, 4}, e.mustRead(0, b, 4), "a refused read changes nothing")
			err = e.srv.Write([]compute.WriteOp{{Desc: c.d, Data: make([]byte, 16)}}, 0).Wait()
			require.ErrorIs(t, err, compute.ErrUnsupportedStrides)
			assert.ErrorContains(t, err, "overflows 64 bits")
			assert.ErrorIs(t, e.srv.Check([]compute.Binding{b}, 0), compute.ErrUnsupportedStrides, "the refused write's destination carries it")
		})
	}
	// An outer stride equal to a product that wraps ((2^33+1) * 2^31 is 2^31 modulo
	// 2^64) is not dense.
	b = e.floats(0, 1, 2, 3, 4)
	d := compute.CopyDescriptor{Binding: b, Shape: []int{1, 1<<33 + 1, 1 << 31}, Strides: []int{1 << 31, 1 << 31, 1}, ElemSize: 1}
	_, err := e.srv.Read([]compute.CopyDescriptor{d}, 0).Wait()
	require.ErrorIs(t, err, compute.ErrUnsupportedStrides)
	assert.ErrorContains(t, err, "not dense")
	assert.Equal(t, []float32{1, 2, 3, 4}, e.mustRead(0, b, 4), "nothing was written")
}
