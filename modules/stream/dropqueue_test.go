package stream_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// staged is a host buffer the device reads after the call that queued the read: its
// Release checks that the device finished with it, which is the drop queue's promise.
type staged struct {
	t        *testing.T
	p        hipsys.Platform
	used     hipsys.Event // recorded after the copy that reads the buffer
	released atomic.Bool
}

func (s *staged) Release() error {
	assert.NoError(s.t, s.p.EventQuery(s.used), "released before the device finished with it")
	_ = s.p.EventDestroy(s.used)
	s.released.Store(true)
	return nil
}

// stage queues an upload of n bytes on s and pushes its source into s's drop queue.
func stage(t *testing.T, p hipsys.Platform, s *stream.Stream, dst hipsys.DevicePtr, n int) *staged {
	src := pinned(t, p, make([]byte, n))
	require.NoError(t, p.MemcpyHtoDAsync(dst, src, uint64(n), s.Sys))
	ev, err := p.EventCreateWithFlags(hipsys.EventDefault)
	require.NoError(t, err)
	require.NoError(t, p.EventRecord(ev, s.Sys))
	item := &staged{t: t, p: p, used: ev}
	s.Drops.Push(item, uint64(n))
	return item
}

func TestDropQueueDoubleFlush(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	x := newDeviceBuffer(t, m, 0, 4<<20)
	s, err := m.Stream(0)
	require.NoError(t, err)

	item := stage(t, p, s, x.ptr, 4<<20)
	syncs := p.Calls("hipEventSynchronize")
	require.NoError(t, s.FlushDrops())
	assert.Equal(t, syncs, p.Calls("hipEventSynchronize"), "the first flush records a fence without waiting")
	assert.False(t, item.released.Load(), "one flush moves it to pending only")
	staged, pending := s.Drops.Len()
	assert.Equal(t, [2]int{0, 1}, [2]int{staged, pending})

	require.NoError(t, s.FlushDrops())
	assert.Equal(t, syncs+1, p.Calls("hipEventSynchronize"), "the second flush waits for the first's fence")
	assert.True(t, item.released.Load(), "freeing a batch takes two flushes")

	require.NoError(t, s.FlushDrops(), "an empty flush is safe")
	staged, pending = s.Drops.Len()
	assert.Zero(t, staged+pending)
}

func TestDropQueuePolicy(t *testing.T) {
	tests := []struct {
		name   string
		sizes  []uint64
		policy stream.DropPolicy
		want   bool
	}{
		{"below both bounds", []uint64{1, 1}, stream.DropPolicy{MaxCount: 3, MaxBytes: 100}, false},
		{"count bound", []uint64{1, 1, 1}, stream.DropPolicy{MaxCount: 3, MaxBytes: 100}, true},
		{"byte bound", []uint64{60, 40}, stream.DropPolicy{MaxCount: 3, MaxBytes: 100}, true},
		{"CubeCL default count", make([]uint64, 64), stream.DefaultDropPolicy, true},
		{"CubeCL integrated count", make([]uint64, 16), stream.IntegratedDropPolicy, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := stream.NewDropQueue(tt.policy, nil)
			for _, n := range tt.sizes {
				q.Push(nopRelease{}, n)
			}
			assert.Equal(t, tt.want, q.ShouldFlush())
		})
	}
}

type nopRelease struct{}

func (nopRelease) Release() error { return nil }

func TestDropQueueCountersReset(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	q := stream.NewDropQueue(stream.DropPolicy{MaxCount: 2, MaxBytes: 1 << 30}, nil)
	q.Push(nopRelease{}, 1)
	q.Push(nopRelease{}, 1)
	require.True(t, q.ShouldFlush())
	require.NoError(t, q.Flush(p, s.Sys))
	assert.False(t, q.ShouldFlush())
}

func TestDropQueueNeverWaitsWhileRecording(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	x := newDeviceBuffer(t, m, 0, 1024)
	s, err := m.Stream(0)
	require.NoError(t, err)

	item := stage(t, p, s, x.ptr, 1024)
	require.NoError(t, s.FlushDrops())
	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	assert.True(t, item.released.Load(), "begin_capture flushes twice before the window opens")

	syncs, streamSyncs := p.Calls("hipEventSynchronize"), p.Calls("hipStreamSynchronize")
	for range 3 {
		require.NoError(t, s.FlushDrops())
		require.NoError(t, s.Flush())
		require.NoError(t, s.Cleanup())
	}
	assert.Equal(t, syncs, p.Calls("hipEventSynchronize"), "no host wait while recording")
	assert.Equal(t, streamSyncs, p.Calls("hipStreamSynchronize"))
	staged, _ := s.Drops.Len()
	assert.Equal(t, 0, staged, "nothing was pushed while recording")

	g, refused := s.Instantiate(1)
	require.Nil(t, refused)
	require.NoError(t, s.DestroyGraph(1, g))
}

func TestDropQueueFenceFailure(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	x := newDeviceBuffer(t, m, 0, 1024)
	s, err := m.Stream(0)
	require.NoError(t, err)

	item := stage(t, p, s, x.ptr, 1024)
	require.True(t, p.FailNext("hipEventCreateWithFlags", 1, hipsys.ErrorOutOfMemory))
	err = s.FlushDrops()
	require.ErrorIs(t, err, hipsys.ErrorOutOfMemory)
	assert.False(t, item.released.Load())

	// The next flush has pending items and no fence: it synchronizes the stream instead.
	require.NoError(t, s.FlushDrops())
	assert.True(t, item.released.Load())
}

func TestStreamDropFlushesWhenDue(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p, stream.WithDropPolicy(stream.DropPolicy{MaxCount: 2, MaxBytes: 1 << 30}))
	s, err := m.Stream(0)
	require.NoError(t, err)

	require.NoError(t, s.Drop(nopRelease{}, 1, false))
	staged, pending := s.Drops.Len()
	assert.Equal(t, [2]int{1, 0}, [2]int{staged, pending}, "below the policy: kept staged")
	require.NoError(t, s.Drop(nopRelease{}, 1, false))
	staged, pending = s.Drops.Len()
	assert.Equal(t, [2]int{0, 2}, [2]int{staged, pending}, "the policy flushed")
	require.NoError(t, s.Drop(nopRelease{}, 1, true))
	staged, pending = s.Drops.Len()
	assert.Equal(t, [2]int{0, 1}, [2]int{staged, pending}, "forced: flushed at once")

	require.NoError(t, s.PrepareCapture())
	require.NoError(t, s.BeginCapture())
	for range 5 {
		require.NoError(t, s.Drop(nopRelease{}, 1, true))
	}
	staged, _ = s.Drops.Len()
	assert.Equal(t, 5, staged, "never flushed while recording: the queue grows")
	g, refused := s.Instantiate(1)
	require.Nil(t, refused)
	staged, pending = s.Drops.Len()
	assert.Zero(t, staged+pending, "the capture's double flush frees it all")
	require.NoError(t, s.DestroyGraph(1, g))
}

func TestDropQueueFailedWaitStillReleases(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	s, err := m.Stream(0)
	require.NoError(t, err)
	released := 0
	s.Drops.Push(countRelease{&released}, 1)
	require.NoError(t, s.FlushDrops())
	p.FailNext("hipEventSynchronize", 1, hipsys.ErrorLaunchFailure)
	require.NoError(t, s.FlushDrops(), "a device fault reports through reads and syncs, not the queue")
	assert.Equal(t, 1, released)
}

type countRelease struct{ n *int }

func (c countRelease) Release() error { *c.n++; return nil }
