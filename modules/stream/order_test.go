package stream_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

const waitCall = "hipStreamWaitEvent"

// TestOrderFollowsLastWrite is the test the allocation-cursor rule fails: buffer X is
// allocated on A, stream B waits for A past that point, and then A writes X again. A
// rule comparing X's allocation cursor sees B already past it and lets B read without
// waiting; following the last write, B waits for A's second write.
func TestOrderFollowsLastWrite(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 1, 2
	const n = 8 << 20 // large enough that an unordered read would see the copy half done
	x := newDeviceBuffer(t, m, a, n)
	first := pinned(t, p, bytes.Repeat([]byte{1}, n))
	second := pinned(t, p, bytes.Repeat([]byte{2}, n))

	require.NoError(t, upload(m, a, x, first, n))
	waits := p.Calls(waitCall)
	got, err := download(t, m, b, x, n)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{1}, n), got)
	assert.Equal(t, waits+1, p.Calls(waitCall), "B waits for A's write")

	_, err = download(t, m, b, x, 16)
	require.NoError(t, err)
	assert.Equal(t, waits+1, p.Calls(waitCall), "B already waited past that write")

	// X's allocation cursor is long behind B's view of A; its last write is not.
	require.NoError(t, upload(m, a, x, second, n))
	got, err = download(t, m, b, x, n)
	require.NoError(t, err)
	assert.Equal(t, waits+2, p.Calls(waitCall), "B waits for A's second write of X")
	assert.Equal(t, bytes.Repeat([]byte{2}, n), got)
}

// TestOrderOwnBufferWrittenElsewhere: a buffer homed on B but last written on A makes
// B wait, though all its buffers "live" on B.
func TestOrderOwnBufferWrittenElsewhere(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 3, 4
	const n = 4 << 20
	x := newDeviceBuffer(t, m, b, n)
	src := pinned(t, p, bytes.Repeat([]byte{7}, n))
	_, err := m.Stream(a)
	require.NoError(t, err)

	require.NoError(t, upload(m, a, x, src, n))
	waits := p.Calls(waitCall)
	got, err := download(t, m, b, x, n)
	require.NoError(t, err)
	assert.Equal(t, waits+1, p.Calls(waitCall))
	assert.Equal(t, bytes.Repeat([]byte{7}, n), got)

	// B writes it back home: no more foreign writes, no more waits.
	require.NoError(t, upload(m, b, x, src, n))
	waits = p.Calls(waitCall)
	_, err = download(t, m, b, x, 16)
	require.NoError(t, err)
	assert.Equal(t, waits, p.Calls(waitCall))
}

// TestOrderHomeWriteAfterForeignWrite: marks keep only writes away from home, so a home
// write drops the foreign mark before it; a third stream must then order after the home
// write (its stream's done cursor), not after the stale foreign one.
func TestOrderHomeWriteAfterForeignWrite(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const home, away, third stream.ID = 1, 2, 3
	const n = 8 << 20 // large enough that an unordered read would see the copy half done
	x := newDeviceBuffer(t, m, home, n)
	first := pinned(t, p, bytes.Repeat([]byte{1}, n))
	second := pinned(t, p, bytes.Repeat([]byte{2}, n))
	_, err := m.Stream(away)
	require.NoError(t, err)

	require.NoError(t, upload(m, away, x, first, n)) // marked: written away from home
	require.NoError(t, upload(m, home, x, second, n))
	waits := p.Calls(waitCall)
	got, err := download(t, m, third, x, n)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{2}, n), got, "the third stream sees the home write")
	assert.Equal(t, waits+1, p.Calls(waitCall), "one wait: for the home stream")
}

func TestOrderSameStreamNeverWaits(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	x := newDeviceBuffer(t, m, 5, 64)
	src := pinned(t, p, make([]byte, 64))
	waits := p.Calls(waitCall)
	for range 3 {
		require.NoError(t, upload(m, 5, x, src, 64))
		_, err := download(t, m, 5, x, 64)
		require.NoError(t, err)
	}
	assert.Equal(t, waits, p.Calls(waitCall))
}

func TestResolveBookkeeping(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p, stream.WithMaxStreams(4))
	x := newDeviceBuffer(t, m, 2, 64)
	src := pinned(t, p, make([]byte, 64))
	require.NoError(t, upload(m, 2, x, src, 64))
	a, err := m.Stream(2)
	require.NoError(t, err)
	// One command resolved, and the write scope's mark on top of it.
	require.Equal(t, uint64(2), a.Cursor())

	r, err := m.Resolve(1, []stream.Binding{x.b})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.Equal(t, uint64(2), r.Stream().LastSynced(2), "B waited for A up to A's write")
	assert.Equal(t, uint64(1), r.Cursor())

	// Ids that collide modulo max share a device stream, and need no wait.
	s5, err := m.Stream(5)
	require.NoError(t, err)
	assert.Same(t, r.Stream(), s5)
	assert.ElementsMatch(t, []stream.ID{1, 2}, m.StreamIDs())
}

func TestCrossStreamBindingsPinnedUntilConsumerDone(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 6, 7
	sa, err := m.Stream(a)
	require.NoError(t, err)
	h, err := sa.GPU.Reserve(64)
	require.NoError(t, err)
	mb, err := h.Binding()
	require.NoError(t, err)
	x := stream.Binding{Binding: mb, Stream: a}

	r, err := m.Resolve(b, []stream.Binding{x})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, x.Release())
	require.NoError(t, h.Release())
	require.NoError(t, m.Close()) // drains the release worker: B's fence completed
	assert.Zero(t, sa.GPU.Usage().NumberAllocs, "the pin was released once B finished")
}

func TestCrossStreamPinHeldWhileConsumerRuns(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 8, 9
	sa, err := m.Stream(a)
	require.NoError(t, err)
	h, err := sa.GPU.Reserve(64)
	require.NoError(t, err)
	mb, err := h.Binding()
	require.NoError(t, err)
	x := stream.Binding{Binding: mb, Stream: a}

	// Hold B's fence back: the release worker cannot see B finish.
	require.True(t, p.FailNext("hipEventSynchronize", 1, hipsysNotReady))
	r, err := m.Resolve(b, []stream.Binding{x})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, r.Stream().FencePins()) // the fence, now rather than pinBatch commands on
	require.NoError(t, x.Release())
	require.NoError(t, h.Release())
	require.NoError(t, m.Close())
	assert.Equal(t, uint64(1), sa.GPU.Usage().NumberAllocs,
		"a consumer whose fence failed keeps its pin: leaked, never reused early")
}

// TestOrderWriteWithoutResolve: a replay enqueues its writes without resolving a command
// (no buffers, no cursor step of its own); a stream that had already waited for the
// replaying stream must still wait for it.
func TestOrderWriteWithoutResolve(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 10, 11
	const n = 8 << 20
	x := newDeviceBuffer(t, m, a, n)
	require.NoError(t, upload(m, a, x, pinned(t, p, make([]byte, n)), n))
	_, err := download(t, m, b, x, 16)
	require.NoError(t, err)

	sa := m.TryStream(a)
	waits := p.Calls(waitCall)
	require.NoError(t, m.Over(a, []stream.Binding{x.b}).Execute(func() error {
		return p.MemsetAsync(x.ptr, 0x77, n, sa.Sys)
	}))
	got, err := download(t, m, b, x, n)
	require.NoError(t, err)
	assert.Equal(t, waits+1, p.Calls(waitCall))
	assert.Equal(t, bytes.Repeat([]byte{0x77}, n), got)
}

// TestCrossStreamPinsShareOneFence: the borrowings of pinBatch commands wait for one
// fence, recorded when the last of them closes; until then the owning pool keeps the
// memory (later, never sooner). FencePins gives the fence at once, as a Sync does.
func TestCrossStreamPinsShareOneFence(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const a, b stream.ID = 10, 11
	sa, err := m.Stream(a)
	require.NoError(t, err)
	borrow := func() (memory.Handle, stream.Binding) {
		h, err := sa.GPU.Reserve(64)
		require.NoError(t, err)
		mb, err := h.Binding()
		require.NoError(t, err)
		return h, stream.Binding{Binding: mb, Stream: a}
	}
	use := func(x stream.Binding, times int) *stream.Stream {
		var s *stream.Stream
		for range times {
			r, err := m.Resolve(b, []stream.Binding{x})
			require.NoError(t, err)
			require.NoError(t, r.Close())
			s = r.Stream()
		}
		return s
	}
	allocs := func() uint64 { return sa.GPU.Usage().NumberAllocs }

	h, x := borrow()
	use(x, 31)
	require.NoError(t, x.Release())
	require.NoError(t, h.Release())
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, uint64(1), allocs(), "31 commands' borrowings wait for a fence")
	h2, x2 := borrow()
	use(x2, 1) // the 32nd command: one fence for all
	require.NoError(t, x2.Release())
	require.NoError(t, h2.Release())
	require.Eventually(t, func() bool { return allocs() == 0 }, 5*time.Second, time.Millisecond,
		"after the fence both allocations go back")

	h3, x3 := borrow()
	s := use(x3, 1)
	require.NoError(t, x3.Release())
	require.NoError(t, h3.Release())
	require.NoError(t, s.FencePins())
	require.Eventually(t, func() bool { return allocs() == 0 }, 5*time.Second, time.Millisecond, "FencePins gives the fence at once")
	require.NoError(t, s.FencePins(), "nothing left to fence")
}
