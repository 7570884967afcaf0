package faults

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Detail is the Detail of every injected error, so a test (or a log reader) can tell an
// injected failure from a real one.
const Detail = "injected fault"

// Platform is the fault-injecting wrapper. Its zero value is not usable; build one with
// Wrap.
type Platform struct {
	inner hipsys.Platform

	// armed counts the rules in force. Every call reads it first, so that a wrapper
	// with nothing armed costs an atomic load rather than a mutex.
	armed  atomic.Int32
	counts [numCalls]atomic.Int64

	mu    sync.Mutex
	rules [numCalls]*rule // nil where nothing is armed

	queueMu sync.Mutex
	queues  map[int]bool // devices whose emulated launch queue is held (queue.go)

	live live // objects created through the wrapper and not destroyed (live.go)
}

// rule is one armed failure. kind says which of the three shapes it is.
type rule struct {
	kind   ruleKind
	n      int   // FailNth: the call number to fail; FailNext: calls left to fail
	seen   int   // FailNth: calls seen since arming
	status error // a hipsys.Status or hipsys.RTCStatus
}

type ruleKind int

const (
	always ruleKind = iota
	nth
	next
)

var _ hipsys.Platform = (*Platform)(nil)

// Wrap returns a wrapper around p with nothing armed: until a rule is armed it behaves
// exactly as p. p stays owned by the caller; the wrapper never closes anything of it.
func Wrap(p hipsys.Platform) *Platform { return &Platform{inner: p} }

var _ hipsys.Unwrapper = (*Platform)(nil)

// Unwrap is the wrapped platform. hipsys.As finds no capability through it: the wrapper
// implements every one itself (capabilities.go), so that none of their calls gets past
// the rules and the counters.
func (w *Platform) Unwrap() hipsys.Platform {
	if w == nil {
		return nil
	}
	return w.inner
}

// Name reports the wrapped platform's name: the wrapper is no platform of its own, and
// code that branches on the platform (the cpu-only checks of the conformance suite) must
// see through it.
func (w *Platform) Name() string { return w.inner.Name() }

// Fail makes every call named name fail with status until Clear or Reset. status is a
// hipsys.Status, or a hipsys.RTCStatus for a hiprtc call; any other error is injected as
// hipErrorUnknown. An unknown name arms nothing (no call carries it) and is reported by
// the false result, so a misspelt name does not silently test nothing.
func (w *Platform) Fail(name string, status error) bool {
	return w.arm(name, &rule{kind: always, status: status})
}

// FailNth makes the nth call named name (1-based, counted from now) fail with status,
// once; the calls before it and after it go through. n < 1 arms nothing.
func (w *Platform) FailNth(name string, n int, status error) bool {
	if n < 1 {
		return false
	}
	return w.arm(name, &rule{kind: nth, n: n, status: status})
}

// FailNext makes the next k calls named name fail with status; later ones go through.
// k < 1 arms nothing.
func (w *Platform) FailNext(name string, k int, status error) bool {
	if k < 1 {
		return false
	}
	return w.arm(name, &rule{kind: next, n: k, status: status})
}

// arm installs r for name, replacing any rule already armed for it.
func (w *Platform) arm(name string, r *rule) bool {
	c, ok := byName[name]
	if !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rules[c] == nil {
		w.armed.Add(1)
	}
	w.rules[c] = r
	return true
}

// Clear disarms name's rule, if any.
func (w *Platform) Clear(name string) {
	c, ok := byName[name]
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.disarm(c)
}

// Reset disarms every rule. The call counters keep counting; they are never reset, so a
// test reads a difference (after - before) when it shares the wrapper.
func (w *Platform) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.rules {
		w.disarm(call(c))
	}
}

// disarm removes c's rule; w.mu is held.
func (w *Platform) disarm(c call) {
	if w.rules[c] != nil {
		w.rules[c] = nil
		w.armed.Add(-1)
	}
}

// Calls is the number of calls named name the wrapper has seen since Wrap, injected
// failures included; 0 for an unknown name.
func (w *Platform) Calls(name string) int {
	c, ok := byName[name]
	if !ok {
		return 0
	}
	return int(w.counts[c].Load())
}

// check counts a call and returns the injected error if a rule fires for it, nil if the
// call is to go through to the wrapped platform.
func (w *Platform) check(c call) error {
	w.counts[c].Add(1)
	if w.armed.Load() == 0 {
		return nil
	}
	w.mu.Lock()
	r := w.rules[c]
	if r == nil {
		w.mu.Unlock()
		return nil
	}
	fire := true
	switch r.kind {
	case nth:
		r.seen++
		fire = r.seen == r.n
		if fire {
			w.disarm(c)
		}
	case next:
		r.n--
		if r.n == 0 {
			w.disarm(c)
		}
	}
	status := r.status
	w.mu.Unlock()
	if !fire {
		return nil
	}
	return w.injected(c, status)
}

// checkVariant is check for a flagged call, which is also a call of the one it is a
// variant of (variantOf): it counts as both, and either's rule fails it, the variant's
// error first. Both rules see the call, so a FailNth on either counts it.
func (w *Platform) checkVariant(c call) error {
	errV := w.check(c)
	errB := w.check(bases[c])
	if errV != nil {
		return errV
	}
	return errB
}

// injected builds the error a fired rule returns, shaped as the platforms shape theirs.
func (w *Platform) injected(c call, status error) error {
	var rs hipsys.RTCStatus
	if errors.As(status, &rs) && rs != hipsys.RTCSuccess {
		return hipsys.NewRTCError(w.inner.Name(), names[c], rs, Detail)
	}
	s := hipsys.StatusOf(status)
	if s == hipsys.Success {
		// A rule that "fails" with success would return a nil-looking *Error; HIP
		// has no such thing, so it reads as the unknown failure it is.
		s = hipsys.ErrorUnknown
	}
	return hipsys.NewError(w.inner.Name(), names[c], s, Detail)
}
