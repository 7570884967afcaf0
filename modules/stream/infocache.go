package stream

import (
	"unsafe"

	"github.com/cubehip/cubehip/modules/memory"
)

// GraphID names a captured graph (the seed's GraphId). The server allocates them; this
// package uses them to pin info buffers to the graph that recorded them.
type GraphID uint64

// InfoPolicy bounds the metadata info cache in Normal mode.
type InfoPolicy struct {
	MaxEntries   int // entries kept; 0 stores nothing
	MaxEntrySize int // bytes of info words an entry may hold
}

// DefaultInfoPolicy is CubeCL's: 4096 entries of at most 2048 bytes.
var DefaultInfoPolicy = InfoPolicy{MaxEntries: 4096, MaxEntrySize: 2048}

// Lookup is the cache's answer: a hit with the buffer, or a miss that says whether the
// buffer the caller builds should be stored.
type Lookup struct {
	Handle memory.Handle // on a hit: borrowed, see InfoCache.Lookup
	Hit    bool
	Store  bool // on a miss: hand the built buffer to Store
}

// InfoCache is one stream's metadata info cache: device buffers holding a launch's info
// words, keyed by the exact words. The kernel is not part of the key: info holds no
// pointers, so one buffer serves every kernel given the same words, and a hit is
// byte-identical to a rebuild.
//
// In Normal mode it is bounded (entries and entry size) and evicts the least recently
// used entry that no graph pins. In Capture mode (a stream preparing or recording a
// graph) it keeps everything and pins every entry it touches, once per capture, so the
// recorded launches' buffers stay exactly where the graph points.
//
// The cache owns the handles it stores and releases them when it drops them. It belongs
// to its stream and is used only by the goroutine driving that stream.
type InfoCache struct {
	policy  InfoPolicy
	mode    CacheMode // of the last lookup, which Store follows
	m       map[string]*infoEntry
	lru     infoEntry // sentinel: lru.next is the most recent
	pending []*infoEntry
	graphs  map[GraphID][]*infoEntry
}

type infoEntry struct {
	key        string
	h          memory.Handle
	locks      int  // graphs (committed or pending) pinning this entry
	pendingPin bool // pinned by the open capture already
	prev, next *infoEntry
}

// NewInfoCache returns an empty cache with policy.
func NewInfoCache(policy InfoPolicy) *InfoCache {
	c := &InfoCache{policy: policy, m: make(map[string]*infoEntry)}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// wordsKey views words as bytes without copying; the map lookup below converts it to a
// string without allocating, and Store copies it into a key.
func wordsKey(words []uint64) []byte {
	if len(words) == 0 {
		return nil
	}
	// SAFETY: the view aliases words for the duration of the call only.
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
}

// Lookup finds the buffer for words. On a hit the handle is borrowed: it stays valid
// until the next Store, ClearUnpinned or ReleaseGraph on this cache, which is long enough
// for the launch that asked (a buffer dropped later is reused only by work queued after
// that launch on this same stream). On a miss, Store says whether to hand the built
// buffer to Store: in Capture mode always; in Normal mode when the cache may hold
// entries and the words fit the size bound.
func (c *InfoCache) Lookup(mode CacheMode, words []uint64) Lookup {
	c.mode = mode
	if e, ok := c.m[string(wordsKey(words))]; ok {
		c.touch(e)
		return Lookup{Handle: e.h, Hit: true}
	}
	if mode == CacheCapture {
		return Lookup{Store: true}
	}
	return Lookup{Store: c.policy.MaxEntries > 0 && len(words)*8 <= c.policy.MaxEntrySize}
}

// touch makes e the most recent entry and, while capturing, pins it for the graph.
func (c *InfoCache) touch(e *infoEntry) {
	if c.lru.next != e {
		c.unlink(e)
		c.pushFront(e)
	}
	if c.mode == CacheCapture && !e.pendingPin {
		e.pendingPin = true
		e.locks++
		c.pending = append(c.pending, e)
	}
}

// Store takes ownership of h as the buffer for words (after a miss that said Store). In
// Normal mode, a full cache first evicts its least recently used unpinned entry; when
// every entry is pinned it grows instead, bounded by the live graphs.
func (c *InfoCache) Store(words []uint64, h memory.Handle) {
	key := string(wordsKey(words))
	if old, ok := c.m[key]; ok {
		// Stored twice (two misses built the same words): keep the first, whose handle
		// an earlier hit may have lent out.
		_ = h.Release()
		c.touch(old)
		return
	}
	if c.mode == CacheNormal {
		for len(c.m) >= c.policy.MaxEntries && c.evictOne() {
		}
	}
	e := &infoEntry{key: key, h: h}
	c.m[key] = e
	c.pushFront(e)
	if c.mode == CacheCapture {
		c.touch(e)
	}
}

// evictOne drops the least recently used entry no graph pins, reporting whether there
// was one.
func (c *InfoCache) evictOne() bool {
	for e := c.lru.prev; e != &c.lru; e = e.prev {
		if e.locks == 0 {
			c.drop(e)
			return true
		}
	}
	return false
}

func (c *InfoCache) drop(e *infoEntry) {
	c.unlink(e)
	delete(c.m, e.key)
	_ = e.h.Release()
}

// CommitCapture pins every entry the capture touched to graph: they live until
// ReleaseGraph(graph).
func (c *InfoCache) CommitCapture(graph GraphID) {
	if len(c.pending) == 0 {
		return
	}
	if c.graphs == nil {
		c.graphs = make(map[GraphID][]*infoEntry)
	}
	for _, e := range c.pending {
		e.pendingPin = false
	}
	c.graphs[graph] = append(c.graphs[graph], c.pending...)
	c.pending = nil
}

// DiscardCapture unpins what the capture touched (the graph was refused) but keeps the
// entries: they are still good buffers for these words.
func (c *InfoCache) DiscardCapture() {
	for _, e := range c.pending {
		e.pendingPin = false
		e.locks--
	}
	c.pending = nil
}

// ReleaseGraph drops graph's pins; an entry no graph pins any more is removed and its
// buffer released.
func (c *InfoCache) ReleaseGraph(graph GraphID) {
	for _, e := range c.graphs[graph] {
		e.locks--
		if e.locks == 0 {
			c.drop(e)
		}
	}
	delete(c.graphs, graph)
}

// ClearUnpinned drops every entry no graph or open capture pins. Explicit cleanup calls
// it when the stream is not recording.
func (c *InfoCache) ClearUnpinned() {
	for e := c.lru.next; e != &c.lru; {
		next := e.next
		if e.locks == 0 {
			c.drop(e)
		}
		e = next
	}
}

// Len is the number of entries.
func (c *InfoCache) Len() int { return len(c.m) }

// Pinned reports how many graphs (and the open capture) pin words' entry; -1 if absent.
func (c *InfoCache) Pinned(words []uint64) int {
	if e, ok := c.m[string(wordsKey(words))]; ok {
		return e.locks
	}
	return -1
}

func (c *InfoCache) unlink(e *infoEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *InfoCache) pushFront(e *infoEntry) {
	e.prev, e.next = &c.lru, c.lru.next
	c.lru.next.prev = e
	c.lru.next = e
}
