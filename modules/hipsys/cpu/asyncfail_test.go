package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// failOn queues a command that fails on s's worker, as a kernel that cannot run does.
func failOn(t *testing.T, p *Platform, h hipsys.Stream) {
	t.Helper()
	s, err := p.stream("test", h)
	require.NoError(t, err)
	c := command{kind: cmdHost, host: func() { panic("boom") }}
	require.NoError(t, s.enqueue("test", &c))
}

// TestAsyncFailureReachesEverySynchronization: a command that fails on the worker is
// returned by every synchronization that waits past it (event sync and query, stream
// query and sync), not by one that waits only for earlier work, until a stream-wide
// synchronization acknowledges it; another stream never sees it.
func TestAsyncFailureReachesEverySynchronization(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	other, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	before, after, elsewhere, later := newEvent(t, p), newEvent(t, p), newEvent(t, p), newEvent(t, p)

	require.NoError(t, p.EventRecord(before, h))
	failOn(t, p, h)
	require.NoError(t, p.EventRecord(after, h))
	require.NoError(t, p.EventRecord(elsewhere, other))

	assert.NoError(t, p.EventSynchronize(before), "work before the failure did not fail")
	assert.NoError(t, p.EventQuery(before))
	for range 2 { // not acknowledged by these: each of them reports it
		requireStatus(t, p.EventSynchronize(after), "hipEventSynchronize", hipsys.ErrorLaunchFailure)
		requireStatus(t, p.EventQuery(after), "hipEventQuery", hipsys.ErrorLaunchFailure)
		requireStatus(t, p.StreamQuery(h), "hipStreamQuery", hipsys.ErrorLaunchFailure)
	}
	err = p.EventSynchronize(after)
	assert.Contains(t, err.Error(), "worker panic: boom", "the failed command's own words are kept")
	assert.NoError(t, p.EventSynchronize(elsewhere), "another stream's work is not the failed one's")
	assert.NoError(t, p.StreamSynchronize(other))

	requireStatus(t, p.StreamSynchronize(h), "hipStreamSynchronize", hipsys.ErrorLaunchFailure)
	assert.NoError(t, p.StreamSynchronize(h), "acknowledged")
	assert.NoError(t, p.EventSynchronize(after))
	assert.NoError(t, p.StreamQuery(h))
	require.NoError(t, p.EventRecord(later, h))
	assert.NoError(t, p.EventSynchronize(later), "new work on the stream succeeds")

	// DeviceSynchronize acknowledges every stream's failure.
	failOn(t, p, h)
	failOn(t, p, other)
	require.NoError(t, p.EventRecord(later, other))
	requireStatus(t, p.EventSynchronize(later), "hipEventSynchronize", hipsys.ErrorLaunchFailure)
	requireStatus(t, p.DeviceSynchronize(), "hipDeviceSynchronize", hipsys.ErrorLaunchFailure)
	assert.NoError(t, p.DeviceSynchronize())
	assert.NoError(t, p.EventSynchronize(later))
	assert.NoError(t, p.StreamSynchronize(h))

	for _, ev := range []hipsys.Event{before, after, elsewhere, later} {
		require.NoError(t, p.EventDestroy(ev))
	}
	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.StreamDestroy(other))
}

// TestAsyncFailureOfAGraphKernel: a real kernel that cannot run (its module was unloaded
// while an executable graph still launches it) fails the event recorded after the
// replay, and the work queued after it on the stream still runs.
func TestAsyncFailureOfAGraphKernel(t *testing.T) {
	p := newTest(t)
	_, empty := loadKernels(t, p)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	require.NoError(t, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	require.NoError(t, p.ModuleLaunchKernel(empty, one, one, 0, h, nil))
	g, err := p.StreamEndCapture(h)
	require.NoError(t, err)
	x, err := p.GraphInstantiate(g)
	require.NoError(t, err)
	require.NoError(t, p.GraphDestroy(g))
	for _, m := range p.modules.all() {
		require.NoError(t, p.ModuleUnload(p.moduleHandle(m)))
	}
	d, err := p.Malloc(8)
	require.NoError(t, err)
	ev := newEvent(t, p)

	require.NoError(t, p.GraphLaunch(x, h))
	require.NoError(t, p.MemsetAsync(d, 7, 8, h))
	require.NoError(t, p.EventRecord(ev, h))
	requireStatus(t, p.EventSynchronize(ev), "hipEventSynchronize", hipsys.ErrorInvalidHandle)
	got := make([]byte, 8)
	require.NoError(t, p.MemcpyDtoH(got, d))
	assert.Equal(t, []byte{7, 7, 7, 7, 7, 7, 7, 7}, got, "later work on the stream ran")
	requireStatus(t, p.StreamSynchronize(h), "hipStreamSynchronize", hipsys.ErrorInvalidHandle)

	require.NoError(t, p.EventDestroy(ev))
	require.NoError(t, p.Free(d))
	require.NoError(t, p.GraphExecDestroy(x))
	require.NoError(t, p.StreamDestroy(h))
}

func newEvent(t *testing.T, p *Platform) hipsys.Event {
	t.Helper()
	ev, err := p.EventCreateWithFlags(hipsys.EventDisableTiming)
	require.NoError(t, err)
	return ev
}

// TestFailOnDeviceIsAnAsynchronousFailure: FailOnDevice returns at once and its failure
// arrives as a faulting kernel's does: at the synchronizations that wait past it, with
// hipErrorLaunchFailure and its detail, until a stream-wide one acknowledges it.
func TestFailOnDeviceIsAnAsynchronousFailure(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	before, after := newEvent(t, p), newEvent(t, p)
	require.NoError(t, p.EventRecord(before, h))
	require.NoError(t, p.FailOnDevice(h, "trap in kernel k"))
	require.NoError(t, p.EventRecord(after, h))
	assert.NoError(t, p.EventSynchronize(before))
	err = p.EventSynchronize(after)
	requireStatus(t, err, "hipEventSynchronize", hipsys.ErrorLaunchFailure)
	assert.Contains(t, err.Error(), "trap in kernel k")
	requireStatus(t, p.StreamSynchronize(h), "hipStreamSynchronize", hipsys.ErrorLaunchFailure)
	assert.NoError(t, p.EventSynchronize(after), "acknowledged")
	require.NoError(t, p.EventDestroy(before))
	require.NoError(t, p.EventDestroy(after))
	require.NoError(t, p.StreamDestroy(h))
}

// TestWaitPassesAFailureOnOnceTheRecordHasRun: a stream that waits for an event recorded
// after failed work fails with it, as on a GPU, whether or not the record has already
// run when the wait is issued (before the fix, a wait on a completed record was dropped
// and passed nothing on: the waiting stream's work then ran on as if its input were
// written, and its synchronizations reported nothing). A wait for a record made before
// the failure passes nothing on, and neither does one after the failure was
// acknowledged.
func TestWaitPassesAFailureOnOnceTheRecordHasRun(t *testing.T) {
	p := newTest(t)
	a, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	b, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	before, after := newEvent(t, p), newEvent(t, p)
	require.NoError(t, p.EventRecord(before, a))
	require.NoError(t, p.FailOnDevice(a, "trap"))
	require.NoError(t, p.EventRecord(after, a))
	// Both records have run (an event wait does not acknowledge the failure).
	require.NoError(t, p.EventSynchronize(before))
	requireStatus(t, p.EventSynchronize(after), "hipEventSynchronize", hipsys.ErrorLaunchFailure)

	require.NoError(t, p.StreamWaitEvent(b, before, 0))
	assert.NoError(t, p.StreamSynchronize(b), "ordered only after work before the failure")
	require.NoError(t, p.StreamWaitEvent(b, after, 0))
	err = p.StreamSynchronize(b)
	requireStatus(t, err, "hipStreamSynchronize", hipsys.ErrorLaunchFailure)
	assert.Contains(t, err.Error(), "trap")

	requireStatus(t, p.StreamSynchronize(a), "hipStreamSynchronize", hipsys.ErrorLaunchFailure)
	require.NoError(t, p.StreamWaitEvent(b, after, 0))
	assert.NoError(t, p.StreamSynchronize(b), "acknowledged before the wait was issued")

	for _, ev := range []hipsys.Event{before, after} {
		require.NoError(t, p.EventDestroy(ev))
	}
	require.NoError(t, p.StreamDestroy(a))
	require.NoError(t, p.StreamDestroy(b))
}
