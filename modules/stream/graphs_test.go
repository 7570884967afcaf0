package stream_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

func TestCapturesLifecycle(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	x := newDeviceBuffer(t, m, 0, 64)

	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	require.NoError(t, m.Over(0, []stream.Binding{x.b}).Execute(func() error {
		return p.MemsetAsync(x.ptr, 0x21, 64, s.Sys)
	}))
	id := stream.NewGraphID()
	g, refused := s.Instantiate(id)
	require.Nil(t, refused)

	var c stream.Captures
	c.Insert(id, s, g)
	assert.True(t, c.Contains(id))
	var set []stream.Binding
	c.ExtendWritten(id, &set)
	c.ExtendWritten(id+1000, &set)
	require.Len(t, set, 1)

	// Replayed on another stream: the write order follows.
	require.NoError(t, m.Over(1, set).Execute(func() error {
		r, err := m.Resolve(1, nil)
		require.NoError(t, err)
		defer r.Close()
		return c.Replay(id, r.Stream())
	}))
	got, err := download(t, m, 2, x, 64)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{0x21}, 64), got)

	s1 := m.TryStream(1)
	assert.ErrorIs(t, c.Replay(id+1000, s1), stream.ErrUnknownGraph)
	p.FailNext("hipGraphLaunch", 1, hipsys.ErrorLaunchFailure)
	assert.ErrorIs(t, c.Replay(id, s1), hipsys.ErrorLaunchFailure)

	require.NoError(t, c.Destroy(id))
	require.NoError(t, c.Destroy(id), "a double release is a no-op")
	assert.False(t, c.Contains(id))
	assert.NotEqual(t, stream.NewGraphID(), stream.NewGraphID())
}
