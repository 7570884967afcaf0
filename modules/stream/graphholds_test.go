package stream_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/stream"
)

// A graph holds every buffer its recorded work uses until it is destroyed: each replay
// reads src and writes dst again, so once the client has released them, a new
// allocation of the same size on the same stream must not get their memory (a replay
// would write into a buffer another owner holds). The work is recorded as the server
// records it: a scope over the outputs, and a resolve of every buffer the work uses,
// which is where the capture takes its holds.
func TestGraphHoldsItsBuffers(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	src := newDeviceBuffer(t, m, 0, 64)
	dst := newDeviceBuffer(t, m, 0, 64)
	require.NoError(t, upload(m, 0, src, pinned(t, p, bytes.Repeat([]byte{0x21}, 64)), 64))

	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	require.NoError(t, m.Over(0, []stream.Binding{dst.b}).Execute(func() error {
		r, err := m.Resolve(0, []stream.Binding{src.b, dst.b})
		if err != nil {
			return err
		}
		defer r.Close()
		return p.MemcpyDtoDAsync(dst.ptr, src.ptr, 64, r.Stream().Sys)
	}))
	id := stream.NewGraphID()
	g, refused := s.Instantiate(id)
	require.Nil(t, refused)
	var c stream.Captures
	c.Insert(id, s, g)
	held := map[uint64]bool{}
	for _, b := range g.Used {
		held[uint64(b.ID())] = true
	}
	assert.Equal(t, map[uint64]bool{uint64(src.b.ID()): true, uint64(dst.b.ID()): true}, held,
		"the graph lists the buffers its work reads and writes")

	// The client lets go of both; the graph still holds them.
	for _, d := range []*deviceBuffer{src, dst} {
		require.NoError(t, d.b.Release())
		require.NoError(t, d.h.Release())
	}
	for range 4 {
		n := newDeviceBuffer(t, m, 0, 64)
		assert.NotEqual(t, src.ptr, n.ptr, "a new allocation got the memory the graph's replays read")
		assert.NotEqual(t, dst.ptr, n.ptr, "a new allocation got the memory the graph's replays write")
	}

	// A replay still finds its buffers as it left them.
	require.NoError(t, m.Over(0, g.Written).Execute(func() error { return c.Replay(id, s) }))
	require.NoError(t, p.StreamSynchronize(s.Sys))

	live := s.GPU.Usage().NumberAllocs
	require.NoError(t, c.Destroy(id))
	require.NoError(t, s.Cleanup())
	assert.Equal(t, live-2, s.GPU.Usage().NumberAllocs, "destroying the graph gives its two buffers back")
}
