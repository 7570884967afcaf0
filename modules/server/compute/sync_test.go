package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// syncCalls are the driver calls a sync could make: a stream-wide wait, or an event's
// life cycle.
var syncCalls = []string{"hipStreamSynchronize", "hipEventCreateWithFlags", "hipEventRecord", "hipEventSynchronize", "hipEventDestroy"}

func (e *env) callCounts(names []string) map[string]int {
	out := make(map[string]int, len(names))
	for _, n := range names {
		out[n] = e.f.Calls(n)
	}
	return out
}

// A sync costs what the driver charges a caller that waits for its stream: one
// hipStreamSynchronize, no event created, recorded, waited for or destroyed. The wait
// covers the work queued before it: the stream is then known idle, so a small read
// after it is one blocking copy with no query of the stream.
func TestSyncIsOneStreamWait(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3), e.empty(0, 3)
	launch(t, e.srv, addOne, 3, 0, in, out)
	require.NoError(t, e.srv.Sync(nil, 0).Wait()) // warm: the stream exists

	launch(t, e.srv, addOne, 3, 0, in, out)
	before := e.callCounts(syncCalls)
	require.NoError(t, e.srv.Sync([]compute.Binding{out}, 0).Wait())
	after := e.callCounts(syncCalls)
	for _, n := range syncCalls {
		want := 0
		if n == "hipStreamSynchronize" {
			want = 1
		}
		assert.Equal(t, want, after[n]-before[n], n)
	}

	queries, copies := e.f.Calls("hipStreamQuery"), e.f.Calls("hipMemcpyDtoH")
	assert.Equal(t, []float32{2, 3, 4}, e.mustRead(0, out, 3))
	assert.Equal(t, queries, e.f.Calls("hipStreamQuery"), "the sync certified the stream idle")
	assert.Equal(t, copies+1, e.f.Calls("hipMemcpyDtoH"), "one blocking copy")
}

// A failed wait is the sync's error, naming the wait; the write it did not confirm
// carries the failure, the stream is not left broken, and the next sync succeeds.
func TestSyncReturnsTheWaitsFailure(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	launch(t, e.srv, addOne, 2, 0, in, out)
	e.f.FailNext("hipStreamSynchronize", 1, hipsys.ErrorLaunchFailure)
	err := e.srv.Sync(nil, 0).Wait()
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.Contains(t, err.Error(), "wait for the stream")
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	_, rerr := e.read(0, out, 2)
	assert.ErrorIs(t, rerr, hipsys.ErrorLaunchFailure, "out's write was never confirmed")
}

// A sync with a buffer that carries a failure returns it without touching the device.
func TestSyncOfAFailedBufferDoesNotWait(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	e.f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	_ = e.srv.Launch(addOne, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{in, out}, Scalars: []compute.Scalar{compute.U32(2)}}, 0, compute.Execute)
	before := e.callCounts(syncCalls)
	assert.ErrorIs(t, e.srv.Sync([]compute.Binding{out}, 0).Wait(), hipsys.ErrorLaunchFailure)
	assert.Equal(t, before, e.callCounts(syncCalls), "no wait")
}
