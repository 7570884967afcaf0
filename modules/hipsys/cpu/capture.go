package cpu

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// capture is a stream's capture in progress: the commands queued on the stream since
// StreamBeginCapture, kept as graph nodes instead of run.
type capture struct {
	mode    hipsys.CaptureMode
	tid     int       // the OS thread that began it, for CaptureModeThreadLocal
	nodes   []command // guarded by the stream's mu
	invalid atomic.Bool
	ended   atomic.Bool // StreamEndCapture ran: its events may be waited for as before
}

// add records template t as a node. The caller holds the stream's mu. Work queued on a
// capture that an illegal call has invalidated is refused, as HIP refuses it, so the
// caller learns at once rather than at StreamEndCapture.
func (c *capture) add(call string, t *command) error {
	if c.invalid.Load() {
		return errorf(call, hipsys.ErrorStreamCaptureInvalidated, "the stream's capture was invalidated")
	}
	if t.kind == cmdRecord {
		t.ev.recordedInCapture(c)
	}
	if t.kind == cmdWait {
		// An implicit wait on another stream's moment (null-stream ordering) has no
		// meaning in a graph replayed later; event waits are kept as cmdWaitEvent and
		// resolved at each launch.
		return nil
	}
	c.nodes = append(c.nodes, command{})
	c.nodes[len(c.nodes)-1].assign(t)
	return nil
}

// refuseWhileCapturing fails call, and invalidates the capture, when the stream is
// capturing: synchronizing with a stream whose work is being recorded rather than run
// could never finish (HIP: hipErrorStreamCaptureUnsupported).
func (s *stream) refuseWhileCapturing(call string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capture != nil {
		s.capture.invalid.Store(true)
		return errorf(call, hipsys.ErrorStreamCaptureUnsupported, "the stream is capturing")
	}
	return nil
}

// checkUnsafe fails call, and invalidates the captures it conflicts with, when a
// capture forbids it: HIP's "potentially unsafe" calls (hipMalloc, hipFree, blocking
// copies and memsets, hipDeviceSynchronize) are illegal while any capture in global mode
// runs, or while the calling thread has one in thread-local mode. Relaxed captures allow
// them. With no capture running it costs one atomic load.
func (p *Platform) checkUnsafe(call string) error {
	if p.capturing.Load() == 0 {
		return nil
	}
	tid := unix.Gettid()
	p.capMu.Lock()
	defer p.capMu.Unlock()
	hit := false
	for c := range p.captures {
		if c.mode == hipsys.CaptureModeGlobal || (c.mode == hipsys.CaptureModeThreadLocal && c.tid == tid) {
			c.invalid.Store(true)
			hit = true
		}
	}
	if hit {
		return errorf(call, hipsys.ErrorStreamCaptureUnsupported, "not allowed while a stream captures")
	}
	return nil
}

func (p *Platform) beginCapture(c *capture) {
	p.capMu.Lock()
	defer p.capMu.Unlock()
	p.captures[c] = struct{}{}
	p.capturing.Add(1)
}

func (p *Platform) endCapture(c *capture) {
	c.ended.Store(true)
	p.capMu.Lock()
	defer p.capMu.Unlock()
	if _, ok := p.captures[c]; ok {
		delete(p.captures, c)
		p.capturing.Add(-1)
	}
}

// StreamBeginCapture starts recording the stream's work. Work queued before the call
// still runs. The null stream cannot capture (hipErrorStreamCaptureUnsupported); a
// stream already capturing is hipErrorIllegalState. CaptureModeThreadLocal refers to
// the calling OS thread, which callers pin with runtime.LockOSThread as HIP requires.
func (p *Platform) StreamBeginCapture(h hipsys.Stream, mode hipsys.CaptureMode) error {
	const call = "hipStreamBeginCapture"
	if mode < hipsys.CaptureModeGlobal || mode > hipsys.CaptureModeRelaxed {
		return errorf(call, hipsys.ErrorInvalidValue, "unknown capture mode")
	}
	if h == hipsys.NullStream {
		return errorf(call, hipsys.ErrorStreamCaptureUnsupported, "the null stream cannot capture")
	}
	s, err := p.stream(call, h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capture != nil {
		return errorf(call, hipsys.ErrorIllegalState, "the stream is already capturing")
	}
	s.capture = &capture{mode: mode, tid: unix.Gettid()}
	p.beginCapture(s.capture)
	return nil
}

// StreamEndCapture stops the capture and returns its graph. Without a capture it is
// hipErrorIllegalState; a capture that an illegal call invalidated ends (the stream is
// no longer capturing) with hipErrorStreamCaptureInvalidated and no graph.
func (p *Platform) StreamEndCapture(h hipsys.Stream) (hipsys.Graph, error) {
	const call = "hipStreamEndCapture"
	s, err := p.stream(call, h)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	c := s.capture
	s.capture = nil
	s.mu.Unlock()
	if c == nil {
		return 0, errorf(call, hipsys.ErrorIllegalState, "the stream is not capturing")
	}
	p.endCapture(c)
	if c.invalid.Load() {
		return 0, errorf(call, hipsys.ErrorStreamCaptureInvalidated, "an illegal call during the capture invalidated it")
	}
	return p.newGraph(c.nodes), nil
}

// StreamIsCapturing reports the stream's capture status.
func (p *Platform) StreamIsCapturing(h hipsys.Stream) (hipsys.CaptureStatus, error) {
	s, err := p.stream("hipStreamIsCapturing", h)
	if err != nil {
		return hipsys.CaptureStatusNone, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.capture == nil:
		return hipsys.CaptureStatusNone, nil
	case s.capture.invalid.Load():
		return hipsys.CaptureStatusInvalidated, nil
	}
	return hipsys.CaptureStatusActive, nil
}
