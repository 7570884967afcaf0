package faults

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
)

var _ hipsys.LiveCounter = (*Platform)(nil)

// kind is one sort of object the wrapper counts.
type kind int

const (
	liveStream kind = iota
	liveEvent
	liveDevice
	liveHost
	liveModule
	liveGraph
	liveExec
	liveProgram
	numKinds
)

// live is the set of objects created through the wrapper and not yet destroyed through
// it, with the size of each allocation. Only calls the wrapped platform carried out
// change it: an injected failure creates and destroys nothing, and neither does a
// destroy the platform refused.
type live struct {
	mu   sync.Mutex
	objs [numKinds]map[uintptr]uint64 // handle or address → bytes (allocations) or 0
}

// add records a created object; 0 (Malloc(0), a failed create) is nothing.
func (l *live) add(k kind, h uintptr, size uint64) {
	if h == 0 {
		return
	}
	l.mu.Lock()
	if l.objs[k] == nil {
		l.objs[k] = map[uintptr]uint64{}
	}
	l.objs[k][h] = size
	l.mu.Unlock()
}

// remove forgets a destroyed object (one the wrapper never saw created is no error:
// the caller may have created it on the wrapped platform directly).
func (l *live) remove(k kind, h uintptr) {
	l.mu.Lock()
	delete(l.objs[k], h)
	l.mu.Unlock()
}

// created records h when the wrapped call that made it succeeded.
func created[H ~uintptr](w *Platform, k kind, h H, size uint64, err error) (H, error) {
	if err == nil {
		w.live.add(k, uintptr(h), size)
	}
	return h, err
}

// destroyed forgets h when the wrapped call that destroyed it succeeded.
func destroyed[H ~uintptr](w *Platform, k kind, h H, err error) error {
	if err == nil {
		w.live.remove(k, uintptr(h))
	}
	return err
}

// Live counts the objects created through the wrapper and not yet destroyed through
// it, on whatever platform it wraps: streams, events, device and pinned allocations
// (with the bytes asked for), modules, graphs, executable graphs and hiprtc programs. It
// is what a leak test reads before and after a piece of work. Objects created on the
// wrapped platform directly are not counted, so tests sharing one platform through
// separate wrappers do not see each other's.
func (w *Platform) Live() hipsys.LiveCounts {
	l := &w.live
	l.mu.Lock()
	defer l.mu.Unlock()
	sum := func(k kind) (bytes uint64) {
		for _, n := range l.objs[k] {
			bytes += n
		}
		return bytes
	}
	return hipsys.LiveCounts{
		Streams: len(l.objs[liveStream]), Events: len(l.objs[liveEvent]),
		DeviceAllocs: len(l.objs[liveDevice]), DeviceBytes: sum(liveDevice),
		HostAllocs: len(l.objs[liveHost]), HostBytes: sum(liveHost),
		Modules: len(l.objs[liveModule]), Graphs: len(l.objs[liveGraph]),
		GraphExecs: len(l.objs[liveExec]), Programs: len(l.objs[liveProgram]),
	}
}
