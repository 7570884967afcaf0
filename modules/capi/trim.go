package main

import (
	"sync"
	"time"
)

// Pools are per device stream, and a host that gives each thread a stream id of its own
// (a thread per request, say) has up to max_streams streams each holding pages sized for
// large tensors: 64 threads with a 400 KiB buffer each kept 1.5 GB reserved for 25 MB in
// use, for good once they released their buffers, since a stream's pools give pages back
// only when that stream allocates again or the host calls cubehip_memory_cleanup. So a
// release schedules a trim: trimDelay later (releases meanwhile join it), when the pools
// reserve more than trimSlack beyond twice what is in use, the device's free pages go, as
// cubehip_memory_cleanup would. A host that allocates and releases steadily keeps its
// pages: its reserve stays within the slack, and a trim waits for a quiet moment.
const (
	trimDelay = 100 * time.Millisecond
	trimSlack = 256 << 20
)

// trimmer is a device's pending trim: one timer, reused, so a release allocates nothing.
type trimmer struct {
	mu      sync.Mutex
	timer   *time.Timer
	pending bool
	closed  bool
}

// schedule arms the trim of dev unless one is pending.
func (t *trimmer) schedule(dev *device) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending || t.closed {
		return
	}
	t.pending = true
	if t.timer == nil {
		t.timer = time.AfterFunc(trimDelay, func() { t.run(dev) })
		return
	}
	t.timer.Reset(trimDelay)
}

func (t *trimmer) run(dev *device) {
	t.mu.Lock()
	t.pending = false
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return
	}
	u, err := dev.d.MemoryUsage()
	if err != nil || u.BytesReserved <= 2*u.BytesInUse+trimSlack {
		return
	}
	// A failure here (the device closing under the trim) is no host's to see.
	_ = dev.d.Cleanup()
}

// stop keeps a trim from starting once the device closes.
func (t *trimmer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
}
