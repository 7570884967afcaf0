package stream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

func TestNewReadsTheDevice(t *testing.T) {
	p := openCPU(t)
	m, err := stream.New(p)
	require.NoError(t, err)
	defer m.Close()
	s, err := m.Stream(0)
	require.NoError(t, err)
	props := s.GPU.Props()
	assert.GreaterOrEqual(t, props.Alignment, uint64(32))
	assert.NotZero(t, props.MemoryTotal)
	assert.Equal(t, uint64(stream.PinnedAlignment), s.Pinned.Props().Alignment)
}

func TestNewFailsCleanly(t *testing.T) {
	p := openCPU(t)
	p.FailNext("hipMemGetInfo", 1, hipsys.ErrorInvalidDevice)
	_, err := stream.New(p)
	require.ErrorIs(t, err, hipsys.ErrorInvalidDevice)
}

func TestStreamsAreLazyAndNonBlocking(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p, stream.WithMaxStreams(4))
	assert.Nil(t, m.TryStream(1), "nothing is created before first use")
	assert.Empty(t, m.StreamIDs())

	p.FailNext("hipStreamCreateWithFlags", 1, hipsys.ErrorOutOfMemory)
	_, err := m.Stream(1)
	require.ErrorIs(t, err, hipsys.ErrorOutOfMemory, "returned, not panicked")
	_, err = m.Resolve(1, nil)
	require.NoError(t, err, "a later call tries again")
	assert.Equal(t, []stream.ID{1}, m.StreamIDs())
	assert.Same(t, m.TryStream(1), m.TryStream(9), "ids share a stream modulo max")
}

func TestLayoutForLaterStreams(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	first, err := m.Stream(0)
	require.NoError(t, err)
	before := len(first.GPU.Layout())

	m.SetGPULayout(memory.Explicit(memory.SlicedSpec{PageSize: 8 << 20, MaxSliceSize: 1 << 20}))
	later, err := m.Stream(1)
	require.NoError(t, err)
	assert.Len(t, later.GPU.Layout(), 1, "streams created later take the new layout")
	assert.Len(t, first.GPU.Layout(), before, "existing streams keep theirs")
}

func TestClosedMultiStreamRefusesNewStreams(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "closing twice is harmless")
	_, err := m.Stream(0)
	assert.ErrorIs(t, err, stream.ErrClosed)
}
