package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Each device stream has pools of its own, which keep the pages of released buffers for
// the stream's next allocations. A host that gives each of many threads (or goroutines)
// a stream id of its own would otherwise keep every stream's pages for good once its
// threads released their buffers. So a release arms a trim: trimDelay later (releases
// meanwhile join it), on a goroutine of the timer's, the Device takes its lock and gives
// back the free pages of the streams that allocated nothing for a while, and those of
// every stream when the pools reserve far more than is in use
// (compute.Server.TrimIdlePools; the rules and their reasons are stream.TrimPolicy's).
// While a stream holds free pages that are not yet idle, the trim looks again when they
// will be. A program that allocates and releases steadily keeps its pages.
//
// Nothing waits for a trim, and nothing of it runs on a release: a release reads one
// flag. A trim takes the Device's lock like any call, and its frees wait for the device.

const trimDelay = 100 * time.Millisecond

// trimmer is a Device's pending trim: one timer, reused, so a release allocates nothing.
type trimmer struct {
	pending atomic.Bool // a trim is armed: a release has nothing to do
	mu      sync.Mutex
	timer   *time.Timer
	closed  bool
	fires   sync.WaitGroup // the armed trim and the one running, for stop
}

// scheduleTrim arms the trim unless one is armed. Any goroutine may call it, with or
// without the Device's lock.
func (d *Device) scheduleTrim() {
	if !d.trim.pending.Load() {
		d.armTrim(trimDelay)
	}
}

func (d *Device) armTrim(after time.Duration) {
	t := &d.trim
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.pending.Load() {
		return
	}
	t.pending.Store(true)
	t.fires.Add(1)
	if t.timer == nil {
		t.timer = time.AfterFunc(after, d.runTrim)
		return
	}
	t.timer.Reset(after)
}

func (d *Device) runTrim() {
	t := &d.trim
	defer t.fires.Done()
	t.mu.Lock()
	// Cleared before the trim: a release during it arms the next one.
	t.pending.Store(false)
	closed := t.closed
	t.mu.Unlock()
	if closed || d.enter() != nil {
		return
	}
	next := d.srv.TrimIdlePools()
	d.leave()
	if next > 0 {
		d.armTrim(next)
	}
}

// stopTrim keeps a trim from starting and waits for one that runs. Close calls it after
// it marked the Device closed, without the lock: a running trim finds the Device closed
// at its enter, or holds the lock until it is done.
func (d *Device) stopTrim() {
	t := &d.trim
	t.mu.Lock()
	t.closed = true
	if t.pending.Load() && t.timer.Stop() {
		t.pending.Store(false)
		t.fires.Done()
	}
	t.mu.Unlock()
	t.fires.Wait()
}
