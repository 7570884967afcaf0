package stream

import (
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/memory"
)

// Failures is the failure store: per allocation, either a claim (a write scope is writing
// it and has not settled) or the failure of the work that should have written it. It is
// server-wide, not per stream, so a failure recorded while enqueuing on one stream is
// seen by a read on any other, and a stream carries no error state of its own.
//
// Differs from CubeCL: the key is the allocation (memory.ID), so
// every offset view of one allocation shares its fate. The seed passes whole bindings
// and never looks at their offsets; keying by byte range would let a read of one packed
// tensor succeed while the failed launch left its neighbour's bytes, in the same pages,
// half written.
//
// Entries are shed when the allocation dies: ids are never reused, so a dead entry could
// not be misread, but it would never leave the map. Each entry keeps an uncounted copy of
// the binding it was recorded through, and the allocation is dead once that copy is no
// longer Valid (the manager recycled its descriptor). [Failures.Shed] drops ids at once;
// a sweep of dead entries runs whenever the map doubles, and on [Failures.ShedDead].
//
// Safe for concurrent use. EnsureWritten of clean buffers costs one atomic load when the
// store is empty, which it is in steady state: every scope that enqueues its work
// releases its claim. When other allocations carry failures, a bit filter over the ids
// in the map answers for clean buffers without taking the lock.
type Failures struct {
	n      atomic.Int64 // len(m), read without the lock by the fast path
	filter [filterWords]atomic.Uint64
	mu     sync.Mutex
	m      map[memory.ID]failure
	dirty  uint64 // filter words that may hold a bit (one bit per word)

	sweepAt int // len(m) at which set sweeps dead entries
}

// failure is one entry. b is a copy that holds no reference (it is never released): it
// only answers whether the allocation still exists.
type failure struct {
	err error
	b   memory.Binding
}

// minSweep keeps small stores from sweeping on every insert.
const minSweep = 64

// filterWords is the size of the bit filter: 4096 bits, so with 64 failed allocations a
// clean id takes the lock about once in 64 lookups (8 clean ids: about one check in 8).
const filterWords = 64

// filterBit is id's bit: a multiplicative hash, because ids are sequential and their
// low bits alone would cluster.
func filterBit(id memory.ID) (word int, mask uint64) {
	h := (uint64(id) * 0x9e3779b97f4a7c15) >> (64 - 12)
	return int(h >> 6), 1 << (h & 63)
}

// mayHold reports whether any of bs might carry an entry. False is certain: a bit is
// set before its entry is inserted and stays set while the entry exists.
func (f *Failures) mayHold(bs []Binding) bool {
	for i := range bs {
		w, m := filterBit(bs[i].ID())
		if f.filter[w].Load()&m != 0 {
			return true
		}
	}
	return false
}

// refilterLocked recomputes the filter from the map. Each word is replaced by one store,
// and a bit of a live entry is set in both the old and the new word, so a concurrent
// reader never misses an entry.
func (f *Failures) refilterLocked() {
	var words [filterWords]uint64
	var dirty uint64
	for id := range f.m {
		w, m := filterBit(id)
		words[w] |= m
		dirty |= 1 << w
	}
	// Only words that were set need a store; in steady state that is the one or two
	// words the last scope's claims touched.
	for d := f.dirty; d != 0; d &= d - 1 {
		i := bits.TrailingZeros64(d)
		f.filter[i].Store(words[i])
	}
	f.dirty = dirty
}

// EnsureWritten returns the failure or claim carried by the first of bs that carries one,
// and nil when all of them were written. It does not block on the device: claims and
// failures are settled at enqueue time, so a fault the device reports later surfaces
// from the fence a read or sync waits on, not from here.
func (f *Failures) EnsureWritten(bs []Binding) error {
	if f.n.Load() == 0 || len(bs) == 0 || !f.mayHold(bs) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range bs {
		if e, ok := f.m[bs[i].ID()]; ok {
			return e.err
		}
	}
	return nil
}

// ensureWrittenFor is EnsureWritten for work recorded by the capture of stream slot:
// that capture's own claims (ErrRecorded) are not failures to it, since its recorded
// work runs in order at every replay.
func (f *Failures) ensureWrittenFor(bs []Binding, slot int) error {
	if f.n.Load() == 0 || len(bs) == 0 || !f.mayHold(bs) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range bs {
		if e, ok := f.m[bs[i].ID()]; ok {
			if rc, own := e.err.(*recordedClaim); own && rc.slot == slot {
				continue
			}
			return e.err
		}
	}
	return nil
}

// recordedPriors is, for the buffers of bs that carry a failure, that failure (a claim
// of work in flight is none; a claim of this capture's own recorded work keeps the
// failure it kept), which a recording's claim on them must not erase (setRecorded).
// Nil when none carries one, which is the steady state.
func (f *Failures) recordedPriors(bs []Binding, slot int) map[memory.ID]error {
	if f.n.Load() == 0 || len(bs) == 0 || !f.mayHold(bs) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out map[memory.ID]error
	for i := range bs {
		e, ok := f.m[bs[i].ID()]
		if !ok {
			continue
		}
		prior := e.err
		if rc, claim := e.err.(*recordedClaim); claim {
			if rc.slot != slot {
				continue
			}
			prior = rc.prior
		} else if errors.Is(e.err, ErrUnsettled) {
			continue
		}
		if prior == nil {
			continue
		}
		if out == nil {
			out = map[memory.ID]error{}
		}
		out[bs[i].ID()] = prior
	}
	return out
}

// setRecorded claims bs for the recorded work of stream slot's capture, each claim
// keeping the failure priors says its buffer carried.
func (f *Failures) setRecorded(slot int, bs []Binding, priors map[memory.ID]error) {
	shared := &recordedClaim{slot: slot}
	if len(priors) == 0 {
		f.set(shared, bs)
		return
	}
	f.mu.Lock()
	for i := range bs {
		id := bs[i].ID()
		if id == 0 {
			continue
		}
		claim := shared
		if p := priors[id]; p != nil {
			claim = &recordedClaim{slot: slot, prior: p}
		}
		w, m := filterBit(id)
		f.filter[w].Or(m)
		f.dirty |= 1 << w
		if f.m == nil {
			f.m = make(map[memory.ID]failure)
		}
		f.m[id] = failure{err: claim, b: bs[i].Binding}
	}
	f.n.Store(int64(len(f.m)))
	f.mu.Unlock()
}

// releaseRecorded clears the claims the capture of stream slot left on bs, putting back
// the failure a claim kept, and nothing else: a failure set since stays.
func (f *Failures) releaseRecorded(bs []Binding, slot int) {
	if f.n.Load() == 0 || len(bs) == 0 {
		return
	}
	f.mu.Lock()
	for i := range bs {
		if e, ok := f.m[bs[i].ID()]; ok {
			if rc, own := e.err.(*recordedClaim); own && rc.slot == slot {
				if rc.prior != nil {
					f.m[bs[i].ID()] = failure{err: rc.prior, b: e.b}
				} else {
					delete(f.m, bs[i].ID())
				}
			}
		}
	}
	f.settleLocked()
	f.mu.Unlock()
}

// Taint records err as the failure of every allocation in bs, replacing any claim or
// earlier failure: the newest work to fail is what a reader should hear about. A nil err
// taints nothing.
func (f *Failures) Taint(err error, bs []Binding) {
	if err == nil {
		return
	}
	f.set(err, bs)
}

// Claim marks every allocation in bs as being written: until Release or Taint settles
// it, a read fails with [ErrUnsettled] rather than copying bytes nothing wrote. It
// replaces any earlier failure, which is how relaunching into a stale buffer (or writing
// it from the host) recovers it.
func (f *Failures) Claim(bs []Binding) { f.set(ErrUnsettled, bs) }

func (f *Failures) set(err error, bs []Binding) {
	if len(bs) == 0 {
		return
	}
	f.mu.Lock()
	if f.m == nil {
		f.m = make(map[memory.ID]failure)
	}
	for i := range bs {
		if id := bs[i].ID(); id != 0 {
			w, m := filterBit(id)
			f.filter[w].Or(m)
			f.dirty |= 1 << w
			f.m[id] = failure{err: err, b: bs[i].Binding}
		}
	}
	if len(f.m) >= max(f.sweepAt, minSweep) {
		f.sweepLocked()
	}
	f.n.Store(int64(len(f.m)))
	f.mu.Unlock()
}

// Release clears whatever bs carry: their work was enqueued, so they are good.
func (f *Failures) Release(bs []Binding) {
	if f.n.Load() == 0 || len(bs) == 0 {
		return
	}
	f.mu.Lock()
	for i := range bs {
		delete(f.m, bs[i].ID())
	}
	f.settleLocked()
	f.mu.Unlock()
}

// Shed forgets the allocations in ids: they died, so nothing can read them again.
func (f *Failures) Shed(ids ...memory.ID) {
	if f.n.Load() == 0 {
		return
	}
	f.mu.Lock()
	for _, id := range ids {
		delete(f.m, id)
	}
	f.settleLocked()
	f.mu.Unlock()
}

// Len is the number of allocations carrying a claim or a failure.
func (f *Failures) Len() int { return int(f.n.Load()) }

// ShedDead forgets every allocation that died without anyone calling Shed. Cleanup calls
// it; set calls it whenever the store doubles.
func (f *Failures) ShedDead() {
	if f.n.Load() == 0 {
		return
	}
	f.mu.Lock()
	f.sweepLocked()
	f.n.Store(int64(len(f.m)))
	f.mu.Unlock()
}

func (f *Failures) sweepLocked() {
	for id, e := range f.m {
		if !e.b.Valid() {
			delete(f.m, id)
		}
	}
	f.sweepAt = 2 * len(f.m)
	f.refilterLocked()
}

// settleLocked publishes the size after deletions, and clears the filter once the map
// is empty so stale bits do not send clean lookups to the lock.
func (f *Failures) settleLocked() {
	f.n.Store(int64(len(f.m)))
	if len(f.m) == 0 {
		f.refilterLocked()
	}
}
