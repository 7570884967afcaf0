package cpu

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestEventTiming(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	start, err := p.EventCreateWithFlags(hipsys.EventDefault)
	require.NoError(t, err)
	stop, err := p.EventCreateWithFlags(hipsys.EventBlockingSync)
	require.NoError(t, err)

	// Never recorded: complete for queries, invalid for timing.
	require.NoError(t, p.EventQuery(start))
	require.NoError(t, p.EventSynchronize(start))
	_, err = p.EventElapsedTime(start, stop)
	requireStatus(t, err, "hipEventElapsedTime", hipsys.ErrorInvalidHandle)

	s := p.streams.get(uintptr(h))
	require.NoError(t, p.EventRecord(start, h))
	c := command{kind: cmdHost, host: func() { time.Sleep(5 * time.Millisecond) }}
	require.NoError(t, s.enqueue("test", &c))
	open := gate(t, s)
	require.NoError(t, p.EventRecord(stop, h))
	requireStatus(t, p.EventQuery(stop), "hipEventQuery", hipsys.ErrorNotReady)
	_, err = p.EventElapsedTime(start, stop)
	requireStatus(t, err, "hipEventElapsedTime", hipsys.ErrorNotReady)
	open()
	require.NoError(t, p.EventSynchronize(stop))
	require.NoError(t, p.EventQuery(stop))
	ms, err := p.EventElapsedTime(start, stop)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ms, float32(5))
	back, err := p.EventElapsedTime(stop, start)
	require.NoError(t, err)
	assert.Equal(t, -ms, back)

	// Re-recording starts a new generation: the event is pending again until the
	// stream reaches the new record, and its time moves forward.
	open = gate(t, s)
	require.NoError(t, p.EventRecord(start, h))
	requireStatus(t, p.EventQuery(start), "hipEventQuery", hipsys.ErrorNotReady)
	open()
	require.NoError(t, p.EventSynchronize(start))
	ms2, err := p.EventElapsedTime(stop, start)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ms2, float32(0))

	require.NoError(t, p.EventDestroy(start))
	require.NoError(t, p.EventDestroy(stop))
	require.NoError(t, p.StreamDestroy(h))
}

// TestEventRecordedOnTwoStreams: a re-record on a fast stream is not overwritten when an
// older record on a slow stream finishes later.
func TestEventRecordedOnTwoStreams(t *testing.T) {
	p := newTest(t)
	slow, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	ev, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	open := gate(t, p.streams.get(uintptr(slow)))
	require.NoError(t, p.EventRecord(ev, slow))
	require.NoError(t, p.EventRecord(ev, 0))
	require.NoError(t, p.StreamSynchronize(0))
	require.NoError(t, p.EventQuery(ev), "the current generation (null stream) has run")
	_, _, at := p.events.get(uintptr(ev)).state()
	open()
	require.NoError(t, p.StreamSynchronize(slow))
	_, _, after := p.events.get(uintptr(ev)).state()
	assert.Equal(t, at, after, "an older generation stamped over the newer one")
	require.NoError(t, p.EventDestroy(ev))
	require.NoError(t, p.StreamDestroy(slow))
}

func TestEventErrors(t *testing.T) {
	p := newTest(t)
	noTiming, err := p.EventCreateWithFlags(hipsys.EventDisableTiming)
	require.NoError(t, err)
	timed, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	require.NoError(t, p.EventRecord(noTiming, 0))
	require.NoError(t, p.EventRecord(timed, 0))
	require.NoError(t, p.EventSynchronize(noTiming))
	require.NoError(t, p.EventSynchronize(timed))
	_, err = p.EventElapsedTime(noTiming, timed)
	requireStatus(t, err, "hipEventElapsedTime", hipsys.ErrorInvalidHandle)
	_, err = p.EventElapsedTime(timed, noTiming)
	requireStatus(t, err, "hipEventElapsedTime", hipsys.ErrorInvalidHandle)
	ms, err := p.EventElapsedTime(timed, timed)
	require.NoError(t, err)
	assert.Zero(t, ms)
	require.NoError(t, p.EventDestroy(noTiming))

	_, err = p.EventCreateWithFlags(0x100)
	requireStatus(t, err, "hipEventCreateWithFlags", hipsys.ErrorInvalidValue)
	_, err = p.EventCreateWithFlags(hipsys.EventInterprocess | hipsys.EventDisableTiming)
	requireStatus(t, err, "hipEventCreateWithFlags", hipsys.ErrorNotSupported)

	for _, bad := range []hipsys.Event{noTiming, 0, 0x999} {
		requireStatus(t, p.EventQuery(bad), "hipEventQuery", hipsys.ErrorInvalidHandle)
		requireStatus(t, p.EventSynchronize(bad), "hipEventSynchronize", hipsys.ErrorInvalidHandle)
		requireStatus(t, p.EventRecord(bad, 0), "hipEventRecord", hipsys.ErrorInvalidHandle)
		requireStatus(t, p.EventDestroy(bad), "hipEventDestroy", hipsys.ErrorInvalidHandle)
		_, err := p.EventElapsedTime(bad, timed)
		requireStatus(t, err, "hipEventElapsedTime", hipsys.ErrorInvalidHandle)
	}
	require.NoError(t, p.EventDestroy(timed))
}
