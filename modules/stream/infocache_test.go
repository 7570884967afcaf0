package stream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/memory/memorytest"
	"github.com/cubehip/cubehip/modules/stream"
)

// infoFixture builds info buffers in a manager of its own, so a test can see when the
// cache releases them.
type infoFixture struct {
	t   *testing.T
	mgr *memory.Manager
}

func newInfoFixture(t *testing.T) *infoFixture {
	mgr, err := memory.New(memorytest.New(), smallProps)
	require.NoError(t, err)
	return &infoFixture{t: t, mgr: mgr}
}

// build is the miss path: a buffer for words, stored when the lookup says so.
func (f *infoFixture) build(c *stream.InfoCache, mode stream.CacheMode, words ...uint64) (memory.Handle, bool) {
	l := c.Lookup(mode, words)
	if l.Hit {
		return l.Handle, true
	}
	h, err := f.mgr.Reserve(uint64(len(words) * 8))
	require.NoError(f.t, err)
	if l.Store {
		c.Store(words, h)
	} else {
		require.NoError(f.t, h.Release())
	}
	return h, false
}

func (f *infoFixture) inUse() uint64 { return f.mgr.Usage().NumberAllocs }

func TestInfoCacheHitAndLimits(t *testing.T) {
	tests := []struct {
		name   string
		policy stream.InfoPolicy
		words  []uint64
		stored bool
	}{
		{"small words are stored", stream.DefaultInfoPolicy, []uint64{1, 2, 3}, true},
		{"at the size bound", stream.InfoPolicy{MaxEntries: 4, MaxEntrySize: 16}, []uint64{1, 2}, true},
		{"over the size bound", stream.InfoPolicy{MaxEntries: 4, MaxEntrySize: 16}, []uint64{1, 2, 3}, false},
		{"zero capacity stores nothing", stream.InfoPolicy{MaxEntries: 0, MaxEntrySize: 2048}, []uint64{1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newInfoFixture(t)
			c := stream.NewInfoCache(tt.policy)
			h, hit := f.build(c, stream.CacheNormal, tt.words...)
			assert.False(t, hit)
			l := c.Lookup(stream.CacheNormal, tt.words)
			assert.Equal(t, tt.stored, l.Hit)
			if tt.stored {
				assert.Equal(t, h.ID(), l.Handle.ID(), "a hit is the buffer built for these words")
			}
		})
	}
}

func TestInfoCacheKeyIsTheExactWords(t *testing.T) {
	f := newInfoFixture(t)
	c := stream.NewInfoCache(stream.DefaultInfoPolicy)
	f.build(c, stream.CacheNormal, 1, 2)
	assert.False(t, c.Lookup(stream.CacheNormal, []uint64{1, 2, 0}).Hit)
	assert.False(t, c.Lookup(stream.CacheNormal, []uint64{2, 1}).Hit)
	assert.True(t, c.Lookup(stream.CacheNormal, []uint64{1, 2}).Hit)
}

func TestInfoCacheEvictsLeastRecentlyUsed(t *testing.T) {
	f := newInfoFixture(t)
	c := stream.NewInfoCache(stream.InfoPolicy{MaxEntries: 2, MaxEntrySize: 2048})
	f.build(c, stream.CacheNormal, 1)
	f.build(c, stream.CacheNormal, 2)
	require.True(t, c.Lookup(stream.CacheNormal, []uint64{1}).Hit) // 1 is now the most recent
	f.build(c, stream.CacheNormal, 3)

	assert.Equal(t, 2, c.Len())
	assert.True(t, c.Lookup(stream.CacheNormal, []uint64{1}).Hit)
	assert.False(t, c.Lookup(stream.CacheNormal, []uint64{2}).Hit, "2 was the least recently used")
	assert.True(t, c.Lookup(stream.CacheNormal, []uint64{3}).Hit)
	assert.Equal(t, uint64(2), f.inUse(), "the evicted buffer was released")
}

func TestInfoCacheCaptureKeepsAndPins(t *testing.T) {
	f := newInfoFixture(t)
	c := stream.NewInfoCache(stream.InfoPolicy{MaxEntries: 1, MaxEntrySize: 8})

	// A capture keeps everything, unbounded, whatever its size.
	f.build(c, stream.CacheCapture, 1)
	f.build(c, stream.CacheCapture, 2, 3)
	f.build(c, stream.CacheCapture, 1) // a hit pins once per capture
	assert.Equal(t, 2, c.Len())
	assert.Equal(t, 1, c.Pinned([]uint64{1}))
	c.CommitCapture(7)

	// Pinned entries survive eviction and cleanup.
	f.build(c, stream.CacheNormal, 4)
	c.ClearUnpinned()
	assert.Equal(t, 2, c.Len())
	assert.True(t, c.Lookup(stream.CacheNormal, []uint64{1}).Hit)
	assert.True(t, c.Lookup(stream.CacheNormal, []uint64{2, 3}).Hit)

	// A second graph pins entry {1} too: released only when both are.
	f.build(c, stream.CacheCapture, 1)
	c.CommitCapture(8)
	assert.Equal(t, 2, c.Pinned([]uint64{1}))
	c.ReleaseGraph(7)
	assert.Equal(t, 1, c.Pinned([]uint64{1}))
	assert.Equal(t, -1, c.Pinned([]uint64{2, 3}), "an entry no graph pins leaves with its last graph")
	c.ReleaseGraph(8)
	assert.Zero(t, c.Len())
	assert.Zero(t, f.inUse(), "every buffer released")
}

func TestInfoCacheDiscardUnpinsButKeeps(t *testing.T) {
	f := newInfoFixture(t)
	c := stream.NewInfoCache(stream.DefaultInfoPolicy)
	f.build(c, stream.CacheCapture, 5)
	assert.Equal(t, 1, c.Pinned([]uint64{5}))
	c.DiscardCapture()
	assert.Equal(t, 0, c.Pinned([]uint64{5}))
	assert.True(t, c.Lookup(stream.CacheNormal, []uint64{5}).Hit, "a refused graph's buffers stay cached")
	c.ClearUnpinned()
	assert.Zero(t, c.Len())
	assert.Zero(t, f.inUse())
}

func TestInfoCacheStoreTwiceKeepsFirst(t *testing.T) {
	f := newInfoFixture(t)
	c := stream.NewInfoCache(stream.DefaultInfoPolicy)
	h1, _ := f.build(c, stream.CacheNormal, 9)
	require.False(t, c.Lookup(stream.CacheNormal, []uint64{8}).Hit)
	h2, err := f.mgr.Reserve(8)
	require.NoError(t, err)
	c.Store([]uint64{9}, h2)
	l := c.Lookup(stream.CacheNormal, []uint64{9})
	require.True(t, l.Hit)
	assert.Equal(t, h1.ID(), l.Handle.ID())
	assert.Equal(t, uint64(1), f.inUse(), "the duplicate was released")
}
