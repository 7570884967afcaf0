package compute

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu"
)

// Every method of hipsys.Platform and of the optional interfaces the server calls that
// takes a stream is in exactly one of hipsys's two tables (queuing, or not): a method
// added later fails here until it is classified.
func TestStreamCallsAreClassified(t *testing.T) {
	streamType := reflect.TypeFor[hipsys.Stream]()
	for _, iface := range []reflect.Type{
		reflect.TypeFor[hipsys.Platform](), reflect.TypeFor[hipsys.LaunchQueue](),
		reflect.TypeFor[hipsys.FlaggingQueue](), reflect.TypeFor[hipsys.FlaggingCopier](),
		reflect.TypeFor[hipsys.FlagWaiter](),
	} {
		for i := range iface.NumMethod() {
			m := iface.Method(i)
			takes := false
			for j := range m.Type.NumIn() {
				takes = takes || m.Type.In(j) == streamType
			}
			if !takes {
				continue
			}
			queuing, quiet := hipsys.IsQueuingCall(m.Name), slices.Contains(hipsys.NonQueuingStreamCalls, m.Name)
			assert.True(t, queuing != quiet, "%s.%s takes a stream: it must be in exactly one of hipsys.QueuingCalls and hipsys.NonQueuingStreamCalls", iface.Name(), m.Name)
		}
	}
}

// Every Platform method in hipsys.QueuingCalls, called through the platform the server
// drives (watched), counts as work queued on its stream, and is one the watch wraps
// (its queuing interface lists it): a queuing method added to hipsys.Platform later
// fails here until the watch overrides it, rather than reaching the platform unseen
// through watched's promotion.
func TestQueueWatchCoversStreamWork(t *testing.T) {
	p, err := cpu.Open()
	require.NoError(t, err)
	wp := newWatched(p)
	w := wp.queueWatch
	narrow := reflect.TypeFor[queuing]()
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(s)

	streamType := reflect.TypeFor[hipsys.Stream]()
	iface := reflect.TypeFor[hipsys.Platform]()
	checked := 0
	for i := range iface.NumMethod() {
		m := iface.Method(i)
		at := -1
		for j := range m.Type.NumIn() {
			if m.Type.In(j) == streamType {
				at = j
			}
		}
		if at < 0 || !hipsys.IsQueuingCall(m.Name) {
			continue
		}
		args := make([]reflect.Value, m.Type.NumIn())
		for j := range args {
			args[j] = reflect.Zero(m.Type.In(j))
		}
		args[at] = reflect.ValueOf(s)
		_, listed := narrow.MethodByName(m.Name)
		assert.True(t, listed, "%s queues work on its stream but the watch's queuing interface does not list it", m.Name)
		if !assert.True(t, reflect.ValueOf(w).MethodByName(m.Name).IsValid(), "%s queues work on its stream but the watch does not wrap it", m.Name) {
			continue
		}
		before, _ := w.state(s).Counts()
		reflect.ValueOf(wp).MethodByName(m.Name).Call(args) // zero handles: an error, counted all the same
		begun, ended := w.state(s).Counts()
		assert.Equal(t, before+1, begun, "%s queues work on its stream but the watch does not count it", m.Name)
		assert.Equal(t, begun, ended, m.Name)
		checked++
	}
	assert.GreaterOrEqual(t, checked, 12, "the stream methods of hipsys.Platform")
}

func TestQueueWatchKnownIdle(t *testing.T) {
	p, err := cpu.Open()
	require.NoError(t, err)
	w := newWatched(p)
	s, err := w.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	d, err := w.Malloc(64)
	require.NoError(t, err)
	defer w.Free(d)

	assert.False(t, w.knownIdle(s), "never seen: unknown")
	require.NoError(t, w.StreamSynchronize(s))
	assert.True(t, w.knownIdle(s))
	require.NoError(t, w.MemsetAsync(d, 1, 64, s))
	assert.False(t, w.knownIdle(s), "work queued since")
	require.NoError(t, w.StreamSynchronize(s))
	assert.True(t, w.knownIdle(s))
	require.NoError(t, w.MemsetAsync(d, 2, 64, s))
	require.NoError(t, w.DeviceSynchronize())
	assert.True(t, w.knownIdle(s), "a device-wide wait certifies every stream")

	// A failed call still counts: the platform may have queued part of it.
	assert.Error(t, w.MemsetAsync(d, 0, 1<<20, s))
	assert.False(t, w.knownIdle(s))

	require.NoError(t, w.StreamDestroy(s))
	assert.False(t, w.knownIdle(s), "a destroyed stream's handle starts unknown")
}

// queuesDuringQuery queues work on the stream while the driver answers a query, as
// another goroutine could: the query's success must not certify that work.
type queuesDuringQuery struct {
	hipsys.Platform
	work func()
}

func (q *queuesDuringQuery) StreamQuery(s hipsys.Stream) error {
	err := q.Platform.StreamQuery(s)
	q.work()
	return err
}

func TestQueueWatchWorkDuringQueryIsNotCertified(t *testing.T) {
	p, err := cpu.Open()
	require.NoError(t, err)
	inner := &queuesDuringQuery{Platform: p}
	w := newQueueWatch(inner)
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer p.StreamDestroy(s)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	defer p.Free(d)

	inner.work = func() { require.NoError(t, w.MemsetAsync(d, 1, 64, s)) }
	require.NoError(t, w.StreamQuery(s))
	assert.False(t, w.knownIdle(s), "work begun after the query's snapshot")

	// Work in flight when the query starts: the snapshot declines to certify.
	inner.work = func() {}
	require.NoError(t, p.StreamSynchronize(s))
	q := w.state(s)
	q.Begin()
	require.NoError(t, w.StreamQuery(s))
	q.End()
	assert.False(t, w.knownIdle(s))
	require.NoError(t, w.StreamSynchronize(s))
	assert.True(t, w.knownIdle(s))
}
