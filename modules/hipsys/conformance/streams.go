package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// spinIters keeps the spin kernel busy for roughly 0.05–0.5 s on a GPU or a host core:
// long enough that a query right after the launch finds it running, short enough for
// the suite's time budget.
const spinIters = 1 << 27

// spin launches the spin kernel on one thread: out[0] = value and out[1] = the
// generator's state, written after iters steps.
func (s *suite) spin(t *testing.T, stream hipsys.Stream, out hipsys.DevicePtr, iters uint64, value uint32) {
	t.Helper()
	fn := s.function(t, "spin", "spin")
	s.launch(t, fn, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 1, Y: 1, Z: 1}, 0, stream,
		new(hipsys.KernelArgs).Ptr(out).U64(iters).U32(value))
}

// spinState is what the spin kernel computes, replayed on the host.
func spinState(iters uint64, value uint32) uint32 {
	x := value
	for range iters {
		x = x*1664525 + 1013904223
	}
	return x
}

// pending asserts that err is nil or hipErrorNotReady: work just queued may or may not
// still be running, and a fast device is not wrong.
func (s *suite) pending(t *testing.T, err error, call string) {
	t.Helper()
	if err != nil {
		s.expect(t, err, call, hipsys.ErrorNotReady)
	}
}

func (s *suite) streams(t *testing.T) {
	p := s.p
	for _, flags := range []hipsys.StreamFlags{hipsys.StreamDefault, hipsys.StreamNonBlocking} {
		t.Run("create flags "+map[hipsys.StreamFlags]string{0: "default", 1: "non-blocking"}[flags], func(t *testing.T) {
			st, err := p.StreamCreateWithFlags(flags)
			require.NoError(t, err)
			assert.NotZero(t, st, "a created stream is not the null stream")
			assert.NoError(t, p.StreamQuery(st), "an idle stream is ready")
			assert.NoError(t, p.StreamSynchronize(st))
			assert.NoError(t, p.StreamDestroy(st))
		})
	}

	t.Run("null stream", func(t *testing.T) {
		assert.NoError(t, p.StreamSynchronize(hipsys.NullStream))
		s.pending(t, p.StreamQuery(hipsys.NullStream), "hipStreamQuery")
	})

	t.Run("query while busy", func(t *testing.T) {
		st := s.stream(t, hipsys.StreamNonBlocking)
		out := s.zeros(t, 8)
		s.spin(t, st, out, spinIters, 9)
		s.pending(t, p.StreamQuery(st), "hipStreamQuery")
		s.sync(t, st)
		assert.NoError(t, p.StreamQuery(st), "ready after synchronize")
		got := bytesU32(s.download(t, out, 8))
		assert.Equal(t, []uint32{9, spinState(spinIters, 9)}, got)
	})

	t.Run("wait event", func(t *testing.T) {
		// Stream b copies what stream a's kernel writes only at its end. Without the
		// wait, b's copy runs at once and reads the zeros the buffer started with.
		a, b := s.stream(t, hipsys.StreamNonBlocking), s.stream(t, hipsys.StreamNonBlocking)
		done := s.event(t, hipsys.EventDisableTiming)
		out := s.zeros(t, 8)
		host := s.hostMalloc(t, 8)
		copy(host.Bytes(8), make([]byte, 8))

		s.spin(t, a, out, spinIters, 42)
		require.NoError(t, p.EventRecord(done, a))
		require.NoError(t, p.StreamWaitEvent(b, done, 0))
		require.NoError(t, p.MemcpyDtoHAsync(host, out, 8, b))
		s.sync(t, b)
		assert.Equal(t, []uint32{42, spinState(spinIters, 42)}, bytesU32(host.Bytes(8)), "b's copy ran after a's kernel")
		assert.NoError(t, p.StreamQuery(a), "a's work finished before b's")
	})

	t.Run("destroyed stream", func(t *testing.T) {
		st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
		require.NoError(t, err)
		require.NoError(t, p.StreamDestroy(st))
		s.expect(t, p.StreamQuery(st), "hipStreamQuery", badHandle...)
		s.expect(t, p.StreamSynchronize(st), "hipStreamSynchronize", badHandle...)
	})

	t.Run("wait on no event", func(t *testing.T) {
		st := s.stream(t, hipsys.StreamNonBlocking)
		s.expect(t, p.StreamWaitEvent(st, 0, 0), "hipStreamWaitEvent", badHandle...)
	})
}

func (s *suite) events(t *testing.T) {
	p := s.p
	for _, flags := range []hipsys.EventFlags{hipsys.EventDefault, hipsys.EventBlockingSync, hipsys.EventDisableTiming} {
		t.Run("record and query flags "+map[hipsys.EventFlags]string{0: "default", 1: "blocking-sync", 2: "disable-timing"}[flags], func(t *testing.T) {
			ev, err := p.EventCreateWithFlags(flags)
			require.NoError(t, err)
			require.NotZero(t, ev)
			// HIP: an event never recorded reads complete, and synchronizing on it
			// returns at once.
			assert.NoError(t, p.EventQuery(ev), "an unrecorded event is complete")
			assert.NoError(t, p.EventSynchronize(ev))

			st := s.stream(t, hipsys.StreamNonBlocking)
			out := s.zeros(t, 8)
			s.spin(t, st, out, spinIters/4, 1)
			require.NoError(t, p.EventRecord(ev, st))
			s.pending(t, p.EventQuery(ev), "hipEventQuery")
			require.NoError(t, p.EventSynchronize(ev))
			assert.NoError(t, p.EventQuery(ev))
			assert.NoError(t, p.StreamQuery(st), "the stream is done once its last event is")
			assert.NoError(t, p.EventDestroy(ev))
		})
	}

	t.Run("elapsed time", func(t *testing.T) {
		st := s.stream(t, hipsys.StreamNonBlocking)
		e1, e2, e3 := s.event(t, hipsys.EventDefault), s.event(t, hipsys.EventDefault), s.event(t, hipsys.EventDefault)
		out := s.zeros(t, 8)
		require.NoError(t, p.EventRecord(e1, st))
		s.spin(t, st, out, spinIters/4, 1)
		require.NoError(t, p.EventRecord(e2, st))
		s.spin(t, st, out, spinIters/4, 2)
		require.NoError(t, p.EventRecord(e3, st))
		require.NoError(t, p.EventSynchronize(e3))

		t12, err := p.EventElapsedTime(e1, e2)
		require.NoError(t, err)
		t13, err := p.EventElapsedTime(e1, e3)
		require.NoError(t, err)
		t23, err := p.EventElapsedTime(e2, e3)
		require.NoError(t, err)
		assert.Positive(t, t12, "a kernel ran between e1 and e2")
		assert.Positive(t, t23, "a kernel ran between e2 and e3")
		assert.GreaterOrEqual(t, t13, t12, "timestamps are monotonic")
		// HIP's event resolution is about a microsecond; allow a few of them.
		assert.InDelta(t, t12+t23, t13, 0.01, "elapsed times add up")
		back, err := p.EventElapsedTime(e3, e1)
		require.NoError(t, err)
		assert.InDelta(t, -t13, back, 0.01, "reversed events give the negated time")
	})

	t.Run("elapsed time errors", func(t *testing.T) {
		st := s.stream(t, hipsys.StreamNonBlocking)
		timed, untimed := s.event(t, hipsys.EventDefault), s.event(t, hipsys.EventDisableTiming)
		never := s.event(t, hipsys.EventDefault)
		require.NoError(t, p.EventRecord(timed, st))
		require.NoError(t, p.EventRecord(untimed, st))
		s.sync(t, st)
		// HIP documents hipErrorInvalidHandle for both, and CUDA's INVALID_HANDLE is
		// the same number (400).
		_, err := p.EventElapsedTime(timed, untimed)
		s.expect(t, err, "hipEventElapsedTime", hipsys.ErrorInvalidHandle)
		_, err = p.EventElapsedTime(timed, never)
		s.expect(t, err, "hipEventElapsedTime", hipsys.ErrorInvalidHandle)
	})

	t.Run("destroyed event", func(t *testing.T) {
		ev, err := p.EventCreateWithFlags(hipsys.EventDefault)
		require.NoError(t, err)
		require.NoError(t, p.EventDestroy(ev))
		s.expect(t, p.EventQuery(ev), "hipEventQuery", badHandle...)
	})
}
