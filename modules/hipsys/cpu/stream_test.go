package cpu

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestStreamOrdering(t *testing.T) {
	p := newTest(t)
	for _, flags := range []hipsys.StreamFlags{hipsys.StreamDefault, hipsys.StreamNonBlocking} {
		h, err := p.StreamCreateWithFlags(flags)
		require.NoError(t, err)
		s := p.streams.get(uintptr(h))
		open := gate(t, s)

		d, err := p.Malloc(256)
		require.NoError(t, err)
		pin, err := p.HostMalloc(256, 0)
		require.NoError(t, err)
		// Each command overwrites the last; only in-order execution leaves 9 behind.
		for v := byte(1); v <= 9; v++ {
			require.NoError(t, p.MemsetAsync(d, v, 256, h))
		}
		require.NoError(t, p.MemcpyDtoHAsync(pin, d, 256, h))
		requireStatus(t, p.StreamQuery(h), "hipStreamQuery", hipsys.ErrorNotReady)
		open()
		require.NoError(t, p.StreamSynchronize(h))
		require.NoError(t, p.StreamQuery(h))
		assert.Equal(t, byte(9), pin.Bytes(256)[0])
		assert.Equal(t, byte(9), pin.Bytes(256)[255])
		require.NoError(t, p.StreamDestroy(h))
		require.NoError(t, p.Free(d))
		require.NoError(t, p.HostFree(pin))
	}
}

func TestStreamHandles(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(0)
	require.NoError(t, err)
	require.NoError(t, p.StreamDestroy(h))
	ev, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.EventDestroy(ev)) }()

	bad := []struct {
		name string
		h    hipsys.Stream
	}{{"destroyed", h}, {"invented", 0x4242}, {"event handle", hipsys.Stream(ev)}}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			requireStatus(t, p.StreamQuery(b.h), "hipStreamQuery", hipsys.ErrorInvalidHandle)
			requireStatus(t, p.StreamSynchronize(b.h), "hipStreamSynchronize", hipsys.ErrorInvalidHandle)
			requireStatus(t, p.StreamDestroy(b.h), "hipStreamDestroy", hipsys.ErrorInvalidHandle)
			requireStatus(t, p.StreamWaitEvent(b.h, ev, 0), "hipStreamWaitEvent", hipsys.ErrorInvalidHandle)
			requireStatus(t, p.EventRecord(ev, b.h), "hipEventRecord", hipsys.ErrorInvalidHandle)
			requireStatus(t, p.StreamBeginCapture(b.h, hipsys.CaptureModeGlobal), "hipStreamBeginCapture", hipsys.ErrorInvalidHandle)
			_, err := p.StreamEndCapture(b.h)
			requireStatus(t, err, "hipStreamEndCapture", hipsys.ErrorInvalidHandle)
			_, err = p.StreamIsCapturing(b.h)
			requireStatus(t, err, "hipStreamIsCapturing", hipsys.ErrorInvalidHandle)
		})
	}
	requireStatus(t, p.StreamDestroy(0), "hipStreamDestroy", hipsys.ErrorInvalidHandle)
	_, err = p.StreamCreateWithFlags(8)
	requireStatus(t, err, "hipStreamCreateWithFlags", hipsys.ErrorInvalidValue)
	requireStatus(t, p.StreamWaitEvent(0, ev, 1), "hipStreamWaitEvent", hipsys.ErrorInvalidValue)
	requireStatus(t, p.StreamWaitEvent(0, 0x77, 0), "hipStreamWaitEvent", hipsys.ErrorInvalidHandle)
	// The null stream is always there.
	require.NoError(t, p.StreamQuery(0))
	require.NoError(t, p.StreamSynchronize(0))
}

// TestStreamDestroyLetsWorkFinish: destroying a stream with work queued returns at
// once and the work still runs.
func TestStreamDestroyLetsWorkFinish(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	s := p.streams.get(uintptr(h))
	open := gate(t, s)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	require.NoError(t, p.MemsetAsync(d, 7, 64, h))
	require.NoError(t, p.StreamDestroy(h))
	// Free waits for the destroyed stream's queued memset, as it waits for live streams.
	freed := make(chan struct{})
	scratch, err := p.Malloc(8)
	require.NoError(t, err)
	go func() { assert.NoError(t, p.Free(scratch)); close(freed) }()
	select {
	case <-freed:
		t.Fatal("Free returned while a destroyed stream still had work queued")
	case <-time.After(10 * time.Millisecond):
	}
	open()
	<-freed
	got := make([]byte, 64)
	require.NoError(t, p.MemcpyDtoH(got, d))
	assert.Equal(t, byte(7), got[63])
	require.NoError(t, p.Free(d))
}

// TestCrossStreamWait: B waits on an event recorded on A after a slow op; B's later
// work must not run until A's op is done.
func TestCrossStreamWait(t *testing.T) {
	p := newTest(t)
	a, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	b, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	ev, err := p.EventCreateWithFlags(hipsys.EventDisableTiming)
	require.NoError(t, err)
	d, err := p.Malloc(256)
	require.NoError(t, err)
	pin, err := p.HostMalloc(256, 0)
	require.NoError(t, err)

	open := gate(t, p.streams.get(uintptr(a))) // the "slow op" on A, held open by the test
	require.NoError(t, p.MemsetAsync(d, 1, 256, a))
	require.NoError(t, p.EventRecord(ev, a))
	require.NoError(t, p.StreamWaitEvent(b, ev, 0))
	require.NoError(t, p.MemcpyDtoHAsync(pin, d, 256, b))

	time.Sleep(20 * time.Millisecond)
	requireStatus(t, p.StreamQuery(b), "hipStreamQuery", hipsys.ErrorNotReady)
	requireStatus(t, p.EventQuery(ev), "hipEventQuery", hipsys.ErrorNotReady)
	open()
	require.NoError(t, p.StreamSynchronize(b))
	require.NoError(t, p.EventQuery(ev))
	assert.Equal(t, byte(1), pin.Bytes(256)[100])

	// A never-recorded event is complete: waiting on it does not block.
	fresh, err := p.EventCreateWithFlags(0)
	require.NoError(t, err)
	require.NoError(t, p.StreamWaitEvent(b, fresh, 0))
	require.NoError(t, p.StreamSynchronize(b))

	for _, h := range []hipsys.Event{ev, fresh} {
		require.NoError(t, p.EventDestroy(h))
	}
	require.NoError(t, p.StreamDestroy(a))
	require.NoError(t, p.StreamDestroy(b))
	require.NoError(t, p.Free(d))
	require.NoError(t, p.HostFree(pin))
}

// TestBlockingCopyOrdersAfterBlockingStreams: a blocking copy runs after the work
// already queued on the null stream and on blocking streams, as HIP's legacy stream.
func TestBlockingCopyOrdersAfterBlockingStreams(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamDefault)
	require.NoError(t, err)
	d, err := p.Malloc(64)
	require.NoError(t, err)
	open := gate(t, p.streams.get(uintptr(h)))
	require.NoError(t, p.MemsetAsync(d, 3, 64, h))
	go func() { time.Sleep(10 * time.Millisecond); open() }()
	got := make([]byte, 64)
	require.NoError(t, p.MemcpyDtoH(got, d))
	assert.Equal(t, byte(3), got[0])

	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.Free(d))
}

// TestDeviceSynchronizeWaitsForAllStreams covers DeviceSynchronize and Free's implicit
// synchronization.
func TestDeviceSynchronizeWaitsForAllStreams(t *testing.T) {
	p := newTest(t)
	var hs []hipsys.Stream
	var opens []func()
	for i := 0; i < 3; i++ {
		h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
		require.NoError(t, err)
		hs = append(hs, h)
		opens = append(opens, gate(t, p.streams.get(uintptr(h))))
	}
	done := make(chan struct{})
	go func() { assert.NoError(t, p.DeviceSynchronize()); close(done) }()
	select {
	case <-done:
		t.Fatal("DeviceSynchronize returned with work pending")
	case <-time.After(10 * time.Millisecond):
	}
	for _, open := range opens {
		open()
	}
	<-done
	for _, h := range hs {
		require.NoError(t, p.StreamQuery(h))
		require.NoError(t, p.StreamDestroy(h))
	}
}

// TestQueueBackPressure: a producer far ahead of the worker blocks instead of growing
// the queue without bound, and everything still runs in order.
func TestQueueBackPressure(t *testing.T) {
	p := newTest(t)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	s := p.streams.get(uintptr(h))
	open := gate(t, s)
	d, err := p.Malloc(8)
	require.NoError(t, err)
	queued := make(chan struct{})
	go func() {
		for i := 0; i < 2*maxPending; i++ {
			assert.NoError(t, p.MemsetAsync(d, byte(i), 8, h))
		}
		close(queued)
	}()
	time.Sleep(10 * time.Millisecond)
	s.mu.Lock()
	assert.LessOrEqual(t, len(s.pending), maxPending)
	s.mu.Unlock()
	open()
	<-queued
	require.NoError(t, p.StreamSynchronize(h))
	got := make([]byte, 1)
	require.NoError(t, p.MemcpyDtoH(got, d))
	assert.Equal(t, byte((2*maxPending-1)&0xff), got[0])
	require.NoError(t, p.StreamDestroy(h))
	require.NoError(t, p.Free(d))
}

func TestConcurrentSafe(t *testing.T) {
	p := newTest(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			h, err := p.StreamCreateWithFlags(hipsys.StreamFlags(g % 2))
			if !assert.NoError(t, err) {
				return
			}
			ev, err := p.EventCreateWithFlags(0)
			assert.NoError(t, err)
			pin, err := p.HostMalloc(512, 0)
			assert.NoError(t, err)
			for i := 0; i < 50; i++ {
				d, err := p.Malloc(512)
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, p.MemsetAsync(d, byte(g), 512, h))
				assert.NoError(t, p.EventRecord(ev, h))
				assert.NoError(t, p.StreamWaitEvent(0, ev, 0))
				assert.NoError(t, p.MemcpyDtoHAsync(pin, d, 512, h))
				assert.NoError(t, p.StreamSynchronize(h))
				assert.Equal(t, byte(g), pin.Bytes(512)[511])
				_ = p.EventQuery(ev)
				_ = p.StreamQuery(0)
				assert.NoError(t, p.Free(d))
			}
			assert.NoError(t, p.EventDestroy(ev))
			assert.NoError(t, p.HostFree(pin))
			assert.NoError(t, p.StreamDestroy(h))
		}(g)
	}
	wg.Wait()
	require.NoError(t, p.DeviceSynchronize())
}

// TestLegacyNullStream: work on the null stream runs after work already queued on
// blocking streams, and work on a blocking stream after work already queued on the null
// stream; non-blocking streams are not ordered against it.
func TestLegacyNullStream(t *testing.T) {
	p := newTest(t)
	blocking, err := p.StreamCreateWithFlags(hipsys.StreamDefault)
	require.NoError(t, err)
	nonBlocking, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	d, err := p.Malloc(8)
	require.NoError(t, err)

	// Blocking stream held: the null stream's memset waits behind it.
	open := gate(t, p.streams.get(uintptr(blocking)))
	require.NoError(t, p.MemsetAsync(d, 1, 8, 0))
	time.Sleep(5 * time.Millisecond)
	requireStatus(t, p.StreamQuery(0), "hipStreamQuery", hipsys.ErrorNotReady)
	open()
	require.NoError(t, p.StreamSynchronize(0))

	// Null stream held: the blocking stream waits behind it, the non-blocking one not.
	open = gate(t, p.nullStream())
	require.NoError(t, p.MemsetAsync(d, 2, 8, blocking))
	require.NoError(t, p.MemsetAsync(d, 3, 8, nonBlocking))
	require.NoError(t, p.StreamSynchronize(nonBlocking))
	time.Sleep(5 * time.Millisecond)
	requireStatus(t, p.StreamQuery(blocking), "hipStreamQuery", hipsys.ErrorNotReady)
	open()
	require.NoError(t, p.StreamSynchronize(blocking))

	require.NoError(t, p.StreamDestroy(blocking))
	require.NoError(t, p.StreamDestroy(nonBlocking))
	require.NoError(t, p.Free(d))
}
