package compute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// CubeCL's graph tests (crates/cubecl-hip/tests/graph.rs and its CUDA twin), ported to the Server on the cpu platform.

func TestGraphCaptureReplay(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4), "reads are legal in the prepare state")
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(out, 16), Data: make([]byte, 16)}}, 0).Wait()
	require.NoError(t, e.srv.BeginCapture(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 0, 0}, e.mustRead(0, out, 4), "the recorded launch did not run")
	for range 2 {
		require.NoError(t, e.srv.Replay(g, 0))
		assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4))
	}
	e.srv.GraphDestroy(g, 0)
}

func TestGraphCaptureStateErrors(t *testing.T) {
	e := newEnv(t)
	assert.ErrorContains(t, e.srv.BeginCapture(0), "begin_capture: call graph_prepare")
	_, err := e.srv.EndCapture(0)
	assert.ErrorContains(t, err, "end_capture: no graph capture is recording")
	require.NoError(t, e.srv.GraphPrepare(0))
	assert.ErrorContains(t, e.srv.GraphPrepare(0), "graph_prepare: a graph capture is already prepared")
	require.NoError(t, e.srv.BeginCapture(0))
	assert.ErrorContains(t, e.srv.BeginCapture(0), "already recording")
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err, "an empty capture is a graph")
	e.srv.GraphDestroy(g, 0)
}

func TestGraphCaptureGrowingThePoolIsRejected(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	require.NoError(t, e.srv.BeginCapture(0))
	launch(t, e.srv, addOne, 4, 0, in, out)
	// A size the warm-up never saw: the pool must grow, inside the window.
	if h, err := e.srv.Empty(3_145_733, 0); err == nil {
		e.keep(h)
	}
	_, err := e.srv.EndCapture(0)
	require.Error(t, err, "a capture that allocated must be refused, never a graph that fails on its second replay")
	assert.Error(t, e.srv.Check([]compute.Binding{out}, 0), "the recorded outputs carry the refusal")
}

func TestGraphInputRewrite(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	g := capture(t, e, func() { launch(t, e.srv, addOne, 4, 0, in, out) })
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{2, 3, 4, 5}, e.mustRead(0, out, 4))
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(in, 16), Data: f32bytes(10, 20, 30, 40)}}, 0).Wait()
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{11, 21, 31, 41}, e.mustRead(0, out, 4))
	e.srv.GraphDestroy(g, 0)
}

func TestGraphIntermediateRecycling(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2, 3, 4), e.empty(0, 4)
	var tmp compute.Handle
	body := func() {
		var err error
		tmp, err = e.srv.Empty(16, 0)
		require.NoError(t, err)
		tb, err := tmp.Binding()
		require.NoError(t, err)
		launch(t, e.srv, addOne, 4, 0, in, tb)
		launch(t, e.srv, mulTwo, 4, 0, tb, out)
		require.NoError(t, tb.Release())
	}
	require.NoError(t, e.srv.GraphPrepare(0))
	body()
	require.NoError(t, tmp.Release())
	require.NoError(t, e.srv.BeginCapture(0))
	body()
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err)
	require.NoError(t, tmp.Release(), "the intermediate is dropped: only the graph holds it now")

	sentinels := make([]compute.Binding, 8)
	for i := range sentinels {
		sentinels[i] = e.floats(0, -1, -1, -1, -1)
	}
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{4, 6, 8, 10}, e.mustRead(0, out, 4))
	for i, s := range sentinels {
		assert.Equal(t, []float32{-1, -1, -1, -1}, e.mustRead(0, s, 4), "sentinel %d was handed the graph's intermediate", i)
	}
	e.srv.GraphDestroy(g, 0)
}

// TestGraphManyLaunchesDynamicMetadata records 150 ping-pong launches, each with its own
// info words: more than twice the drop queue's threshold, so deferred flushes and pool
// priming are exercised while recording.
func TestGraphManyLaunchesDynamicMetadata(t *testing.T) {
	e := newEnv(t)
	a, b := e.floats(0, 0, 0, 0, 0), e.empty(0, 4)
	pass := func() {
		for i := range 150 {
			src, dst := a, b
			if i%2 == 1 {
				src, dst = b, a
			}
			args := &compute.Args{Buffers: []compute.Binding{src, dst}, Info: []uint64{4, uint64(i)}}
			require.NoError(t, e.srv.Launch(addOneInfo, compute.Static(1, 1, 1), args, 0, compute.Execute))
		}
	}
	require.NoError(t, e.srv.GraphPrepare(0))
	pass() // the warm-up executes
	require.NoError(t, e.srv.Sync(nil, 0).Wait())
	require.NoError(t, e.srv.BeginCapture(0))
	pass() // the recorded pass does not
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err)
	assert.Equal(t, []float32{150, 150, 150, 150}, e.mustRead(0, a, 4))
	require.NoError(t, e.srv.Replay(g, 0))
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{450, 450, 450, 450}, e.mustRead(0, a, 4), "exactly three passes")
	hundred := f32bytes(100, 100, 100, 100)
	_ = e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(a, 16), Data: hundred}, {Desc: compute.Linear(b, 16), Data: hundred}}, 0).Wait()
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{250, 250, 250, 250}, e.mustRead(0, a, 4))
	e.srv.GraphDestroy(g, 0)
}

func TestGraphBeginRefusedByTheDriver(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	require.NoError(t, e.srv.GraphPrepare(0))
	launch(t, e.srv, addOne, 2, 0, in, out)
	e.f.FailNext("hipStreamBeginCapture", 1, hipsys.ErrorStreamCaptureUnsupported)
	assert.ErrorIs(t, e.srv.BeginCapture(0), hipsys.ErrorStreamCaptureUnsupported)
	// The stream is back to no capture: launches execute, and it can be prepared again.
	launch(t, e.srv, mulTwo, 2, 0, in, out)
	assert.Equal(t, []float32{2, 4}, e.mustRead(0, out, 2))
	g := capture(t, e, func() { launch(t, e.srv, addOne, 2, 0, in, out) })
	require.NoError(t, e.srv.Replay(g, 0))
	assert.Equal(t, []float32{2, 3}, e.mustRead(0, out, 2))
	e.srv.GraphDestroy(g, 0)
}

// A write inside a recording that cannot have pinned staging (the pools cannot grow
// while recording) is refused: its fallback, a blocking copy from Go memory, would run
// now instead of at each replay, after a wait on the recording stream that breaks the
// capture. Nothing is copied, and the destination carries the refusal.
func TestGraphRecordingRefusesABlockingWrite(t *testing.T) {
	e := newEnv(t)
	b := e.floats(1, 1, 2, 3, 4)
	require.NoError(t, e.srv.GraphPrepare(1))
	require.NoError(t, e.srv.BeginCapture(1))
	// The pinned pools cannot grow while recording, and the warm-up staged nothing.
	syncs, copies := e.f.Calls("hipStreamSynchronize"), e.f.Calls("hipMemcpyHtoD")
	err := e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(b, 16), Data: f32bytes(9, 9, 9, 9)}}, 1).Wait()
	assert.ErrorIs(t, err, compute.ErrNoPinnedMemory)
	assert.Equal(t, copies, e.f.Calls("hipMemcpyHtoD"), "no blocking copy while recording")
	assert.Equal(t, syncs, e.f.Calls("hipStreamSynchronize"), "no wait on the recording stream")
	_, err = e.srv.EndCapture(1)
	assert.Error(t, err, "the capture holds a failed write, so it is refused")
	_, err = e.read(1, b, 4)
	assert.Error(t, err, "the destination carries the refusal, not the old bytes")
}
