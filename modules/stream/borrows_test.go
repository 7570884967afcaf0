package stream_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/stream"
)

// lendOnce makes a buffer on stream a, lets one command of stream b borrow it and
// releases it: only b's hold, waiting for a fence, keeps it in a's pool.
func lendOnce(t *testing.T, m *stream.MultiStream, a, b stream.ID) (*stream.Stream, *stream.Stream) {
	t.Helper()
	sa, err := m.Stream(a)
	require.NoError(t, err)
	h, err := sa.GPU.Reserve(64)
	require.NoError(t, err)
	mb, err := h.Binding()
	require.NoError(t, err)
	x := stream.Binding{Binding: mb, Stream: a}
	r, err := m.Resolve(b, []stream.Binding{x})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, x.Release())
	require.NoError(t, h.Release())
	return sa, r.Stream()
}

// TestReturnFinishedBorrowings: the holds of a stream with nothing left to run go back at
// once, on the caller's goroutine, with no fence.
func TestReturnFinishedBorrowings(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	sa, sb := lendOnce(t, m, 1, 2)
	require.NoError(t, p.StreamSynchronize(sb.Sys))
	time.Sleep(10 * time.Millisecond)
	require.Equal(t, uint64(1), sa.GPU.Usage().NumberAllocs, "the hold waits for a fence")
	records := p.Calls("hipEventRecord")
	m.ReturnFinishedBorrowings()
	assert.Zero(t, sa.GPU.Usage().NumberAllocs, "b is idle: its hold went back at once")
	assert.Equal(t, records, p.Calls("hipEventRecord"), "no fence")
	require.NoError(t, sb.FencePins(), "nothing left to fence")
	m.ReturnFinishedBorrowings() // nothing held: a no-op
}

// TestReturnFinishedBorrowingsKeepsBusy: a stream the driver does not report idle keeps
// its holds: returning them could let the pool hand out memory its work still reads.
func TestReturnFinishedBorrowingsKeepsBusy(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	sa, _ := lendOnce(t, m, 3, 4)
	require.True(t, p.FailNext("hipStreamQuery", 1, hipsysNotReady))
	m.ReturnFinishedBorrowings()
	assert.Equal(t, uint64(1), sa.GPU.Usage().NumberAllocs, "a busy stream keeps what it borrowed")
	m.ReturnFinishedBorrowings()
	assert.Zero(t, sa.GPU.Usage().NumberAllocs, "once idle, given back")
}

// TestSettleBorrowings: a busy stream's holds get their fence, and the channel closes once
// the worker gave them back.
func TestSettleBorrowings(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	sa, _ := lendOnce(t, m, 5, 6)
	records := p.Calls("hipEventRecord")
	require.True(t, p.FailNext("hipStreamQuery", 1, hipsysNotReady))
	done := m.SettleBorrowings()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the release worker never reached the barrier")
	}
	assert.Equal(t, records+1, p.Calls("hipEventRecord"), "the busy stream's fence")
	assert.Zero(t, sa.GPU.Usage().NumberAllocs, "given back when the channel closed")
	<-m.SettleBorrowings() // nothing held: the barrier alone
}

// TestSettleBorrowingsSkipsCapture: a stream recording a capture keeps its holds: a
// fence there would be a node of the graph.
func TestSettleBorrowingsSkipsCapture(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	sa, sb := lendOnce(t, m, 7, 8)
	require.NoError(t, sb.PrepareCapture())
	require.NoError(t, sb.BeginCapture())
	<-m.SettleBorrowings()
	m.ReturnFinishedBorrowings()
	assert.Equal(t, uint64(1), sa.GPU.Usage().NumberAllocs, "held through the capture")
	_, err := sb.AbortCapture()
	require.NoError(t, err)
	<-m.SettleBorrowings()
	assert.Zero(t, sa.GPU.Usage().NumberAllocs, "given back once the capture ended")
}
