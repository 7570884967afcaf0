package stream

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
)

// TestReturnCompletedBeforeTheWorker: a batch whose fence completed is given back by the
// owner while the worker has not reached it, and the worker, reaching it later, leaves
// it; a fence the query does not report complete is left to the worker.
func TestReturnCompletedBeforeTheWorker(t *testing.T) {
	inner, err := hipsys.Open("cpu")
	require.NoError(t, err)
	p := faults.Wrap(inner)
	sys, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.StreamDestroy(sys)) }()
	m, err := memory.New(memorytest.New(), memory.DeviceProps{MemoryTotal: 1 << 30, Alignment: 256})
	require.NoError(t, err)
	hold := func() (memory.Handle, []Binding) {
		h, err := m.Reserve(64)
		require.NoError(t, err)
		b, err := h.Binding()
		require.NoError(t, err)
		return h, []Binding{{Binding: b}}
	}
	// No worker runs: the batches stay in the channel, as behind a busy stream's batch.
	r := &releaser{log: slog.New(slog.DiscardHandler), ch: make(chan *releaseBatch, releaseQueue)}
	returned := 0
	after := func() { returned++ }
	r.after.Store(&after)

	h1, pins1 := hold()
	f1, err := NewFence(p, sys)
	require.NoError(t, err)
	require.NoError(t, p.StreamSynchronize(sys))
	r.send(&releaseBatch{pins: pins1, fence: f1})
	require.NoError(t, h1.Release())
	assert.Equal(t, uint64(1), m.Usage().NumberAllocs, "held by the batch")

	require.True(t, p.FailNext("hipEventQuery", 1, hipsys.ErrorNotReady))
	r.returnCompleted()
	assert.Equal(t, uint64(1), m.Usage().NumberAllocs, "a fence not reported complete is the worker's")
	r.returnCompleted()
	assert.Zero(t, m.Usage().NumberAllocs, "a complete fence: given back by the owner")
	assert.Equal(t, 1, returned, "the release hook ran")

	r.settle(<-r.ch) // the worker reaches it: nothing left to release, its fence destroyed
	assert.Zero(t, r.pending.Load())
	assert.Equal(t, 1, returned, "released once")
	r.returnCompleted() // nothing in flight
}
