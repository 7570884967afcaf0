package stream_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

func TestWindowPrepareArmsBothManagers(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)

	require.NoError(t, s.PrepareCapture())
	assert.True(t, s.GPU.Capturing())
	assert.True(t, s.Pinned.Capturing())
	assert.Equal(t, memory.ModePersistent, s.GPU.Mode())

	require.ErrorIs(t, s.PrepareCapture(), stream.ErrGraphState)
	assert.True(t, s.GPU.Capturing(), "a refused prepare changes nothing")
}

func TestWindowBeginRefusedRunsNothing(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	begins := p.Calls("hipStreamBeginCapture")
	err = s.BeginCapture()
	require.ErrorIs(t, err, stream.ErrGraphState)
	assert.EqualError(t, err, "begin_capture: call graph_prepare before starting a capture")
	assert.Equal(t, begins, p.Calls("hipStreamBeginCapture"))
}

func TestWindowBeginDriverFailureAborts(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	require.NoError(t, s.PrepareCapture())

	p.FailNext("hipStreamBeginCapture", 1, hipsys.ErrorInvalidValue)
	err = s.BeginCapture()
	require.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.Contains(t, err.Error(), "hipStreamBeginCapture failed")
	assert.Equal(t, stream.CaptureNone, s.Capture.State())
	assert.False(t, s.GPU.Capturing(), "the managers' capture ended")
	assert.Equal(t, memory.ModeAuto, s.GPU.Mode(), "and their mode came back")

	// The caller may try again.
	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	g, refused := s.Instantiate(1)
	require.Nil(t, refused)
	require.NoError(t, s.DestroyGraph(1, g))
}

func TestWindowReplayAndRetention(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	x := newDeviceBuffer(t, m, 0, 64)

	require.NoError(t, s.PrepareCapture())
	// Warm-up: an intermediate reserved in the window comes from the persistent pool.
	tmp, err := s.GPU.Reserve(4096)
	require.NoError(t, err)
	require.NoError(t, tmp.Release())
	require.NoError(t, s.BeginCapture())
	tmp, err = s.GPU.Reserve(4096)
	require.NoError(t, err)
	require.NoError(t, m.Over(0, []stream.Binding{x.b}).Execute(func() error {
		r, err := m.Resolve(0, nil)
		require.NoError(t, err)
		defer r.Close()
		return p.MemsetAsync(x.ptr, 0x11, 64, s.Sys)
	}))
	g, refused := s.Instantiate(3)
	require.Nil(t, refused)
	require.Len(t, g.Written, 1)
	assert.Equal(t, x.b.ID(), g.Written[0].ID())
	assert.NotEmpty(t, g.Retained, "the persistent slices the capture touched are pinned on the graph")
	assert.False(t, s.GPU.Capturing())

	// The intermediate is dropped, yet its slice is not handed to a new allocation:
	// the graph's replays still write it.
	tmpLoc := locate(t, s.GPU, tmp)
	require.NoError(t, tmp.Release())
	s.GPU.SetMode(memory.ModePersistent)
	again, err := s.GPU.Reserve(4096)
	require.NoError(t, err)
	assert.NotEqual(t, tmpLoc, locate(t, s.GPU, again))
	require.NoError(t, again.Release())
	s.GPU.SetMode(memory.ModeAuto)

	require.NoError(t, m.Over(0, g.Written).Execute(func() error { return p.GraphLaunch(g.Exec, s.Sys) }))
	got, err := download(t, m, 1, x, 64)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{0x11}, 64), got)
	require.NoError(t, s.DestroyGraph(3, g))
}

// memNodes reports every graph node as a memory allocation, as a graph recorded around
// a stream-ordered hipMallocAsync would be.
type memNodes struct{ hipsys.Platform }

func (memNodes) GraphNodeGetType(hipsys.GraphNode) (hipsys.GraphNodeType, error) {
	return hipsys.GraphNodeMemAlloc, nil
}

func TestWindowRefusesMemoryNodes(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, memNodes{p})
	x := newDeviceBuffer(t, m, 0, 64)
	s, err := m.Stream(0)
	require.NoError(t, err)
	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	require.NoError(t, m.Over(0, []stream.Binding{x.b}).Execute(func() error {
		return p.MemsetAsync(x.ptr, 1, 64, s.Sys)
	}))
	g, refused := s.Instantiate(5)
	require.Nil(t, g)
	require.NotNil(t, refused)
	assert.ErrorIs(t, refused, stream.ErrGraphState)
	assert.Contains(t, refused.Error(), "end_capture: capture recorded 1 memory node(s)")
	require.Len(t, refused.Written, 1)
	assert.Equal(t, x.b.ID(), refused.Written[0].ID())
	assert.Equal(t, stream.CaptureNone, s.Capture.State(), "a refused seal does not wedge the stream")
	require.NoError(t, s.PrepareCapture(), "the stream can capture again")
}

func TestWindowInfoCachePinsFollowTheGraph(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	words := []uint64{4, 2}
	build := func() {
		l := s.Info.Lookup(s.Capture.CacheMode(), words)
		if l.Hit {
			return
		}
		h, err := s.GPU.Reserve(16)
		require.NoError(t, err)
		require.True(t, l.Store)
		s.Info.Store(words, h)
	}
	require.NoError(t, s.PrepareCapture())
	build()
	require.NoError(t, s.BeginCapture())
	build()
	g, refused := s.Instantiate(9)
	require.Nil(t, refused)
	assert.Equal(t, 1, s.Info.Pinned(words), "committed to the graph")
	require.NoError(t, s.Cleanup())
	assert.Equal(t, 1, s.Info.Len(), "cleanup keeps pinned entries")
	require.NoError(t, s.DestroyGraph(9, g))
	assert.Zero(t, s.Info.Len(), "released with the graph")
}

func locate(t *testing.T, mgr *memory.Manager, h memory.Handle) memory.Location {
	b, err := h.Binding()
	require.NoError(t, err)
	defer b.Release()
	loc, err := mgr.Locate(b)
	require.NoError(t, err)
	return loc
}

func TestWindowCrossStreamPinsLiveWithTheGraph(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "graph", true: "refused"}[refuse], func(t *testing.T) {
			p := openCPU(t)
			m := newMulti(t, p)
			s, err := m.Stream(0)
			require.NoError(t, err)
			other := newDeviceBuffer(t, m, 1, 64)
			s1 := m.TryStream(1)

			require.NoError(t, s.PrepareCapture())
			require.NoError(t, s.BeginCapture())
			// The recorded work runs only at replay, so no event can say when it is done
			// with the borrowed buffer: the pin goes to the capture.
			r, err := m.Resolve(0, []stream.Binding{other.b})
			require.NoError(t, err)
			require.NoError(t, r.Close())

			if refuse {
				p.FailNext("hipGraphInstantiate", 1, hipsys.ErrorInvalidValue)
			}
			g, refused := s.Instantiate(2)
			if refuse {
				require.NotNil(t, refused, "a refused graph releases its pins at once (checked at cleanup)")
				return
			}
			require.Nil(t, refused)
			require.Len(t, g.Pins, 1, "the graph holds the cross-stream pin")
			require.NoError(t, other.b.Release())
			require.NoError(t, other.h.Release())
			assert.Equal(t, uint64(1), s1.GPU.Usage().NumberAllocs, "kept alive by the graph")
			require.NoError(t, s.DestroyGraph(2, g))
			assert.Zero(t, s1.GPU.Usage().NumberAllocs, "released with the graph")
		})
	}
}

// A failed hipStreamEndCapture refuses the graph and does not leave the device stream
// capturing: the stream syncs and captures again afterwards.
func TestWindowFailedEndCaptureLeavesTheStreamUsable(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	p.FailNext("hipStreamEndCapture", 1, hipsys.ErrorInvalidValue)
	g, refused := s.Instantiate(1)
	require.Nil(t, g)
	require.NotNil(t, refused)
	assert.ErrorIs(t, refused.Err, hipsys.ErrorInvalidValue)
	status, err := p.StreamIsCapturing(s.Sys)
	require.NoError(t, err)
	assert.Equal(t, hipsys.CaptureStatusNone, status, "the device stream is out of capture mode")
	require.NoError(t, p.StreamSynchronize(s.Sys))

	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	g, refused = s.Instantiate(2)
	require.Nil(t, refused)
	require.NoError(t, s.DestroyGraph(2, g))
}
