package compute

import (
	"fmt"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// TraceMark records an event on stream id where the stream now is, taken from the
// profiler's pool: a trace brackets each operation between two marks, and the device
// stamps both when it reaches them. ok is false, with no error, while the stream records
// a capture (an event recorded there would become a graph node, not a timestamp).
// Every mark returned goes back with TraceRelease.
func (s *Server) TraceMark(id StreamID) (ev hipsys.Event, ok bool, err error) {
	s.settleQueue()
	sys, err := s.profiledStream(id, "trace")
	if err != nil {
		return 0, false, nil
	}
	if ev, err = s.prof.event(); err != nil {
		return 0, false, fmt.Errorf("server: trace: %w", err)
	}
	if err := s.p.EventRecord(ev, sys); err != nil {
		s.prof.put(ev)
		return 0, false, fmt.Errorf("server: trace: %w", err)
	}
	return ev, true, nil
}

// TraceSince waits for mark and returns the device time from origin to it. It may be
// called from any goroutine; origin must have completed or complete first.
func (s *Server) TraceSince(origin, mark hipsys.Event) (time.Duration, error) {
	if err := s.p.EventSynchronize(mark); err != nil {
		return 0, fmt.Errorf("server: trace: %w", err)
	}
	ms, err := s.p.EventElapsedTime(origin, mark)
	if err != nil {
		return 0, fmt.Errorf("server: trace: %w", err)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// TraceRelease gives marks back to the pool once nothing waits for them.
func (s *Server) TraceRelease(marks ...hipsys.Event) { s.prof.put(marks...) }

// KernelLoad is a kernel the server made ready to launch that it did not hold in memory:
// compiled by the platform's compiler, or loaded from the kernel disk cache (Cached).
// Err is the failure, a *CompileError for a kernel that did not compile.
type KernelLoad struct {
	Entry  string
	Start  time.Time
	Took   time.Duration
	Cached bool
	Err    error
}

// ObserveLoads has fn told of every kernel load from now on (nil: none): a Device's
// trace lists compiles this way, whichever call compiled (Compile, a first launch, a
// module variable's access). fn runs on the goroutine that loads, which holds the
// server's owner lock.
func (s *Server) ObserveLoads(fn func(KernelLoad)) { s.kernels.observe = fn }

func (c *kernelCache) observed(k *Kernel, start time.Time, cached *bool, err *error) {
	if c.observe != nil {
		c.observe(KernelLoad{Entry: k.Entry, Start: start, Took: time.Since(start), Cached: *cached, Err: *err})
	}
}
