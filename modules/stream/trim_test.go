package stream_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// keepAll is a slack no test reaches: only the idle rule trims.
const keepAll = 1 << 40

func reserveOn(t *testing.T, m *stream.MultiStream, id stream.ID, size uint64) (*stream.Stream, memory.Handle) {
	t.Helper()
	s, err := m.Stream(id)
	require.NoError(t, err)
	h, err := s.GPU.Reserve(size)
	require.NoError(t, err)
	return s, h
}

// TestTrimIdle: a stream's free pages go once its pools have served no reservation for
// the policy's time, not before; TrimIdle says when to look again.
func TestTrimIdle(t *testing.T) {
	m := newMulti(t, openCPU(t), stream.WithTrimPolicy(stream.TrimPolicy{Idle: time.Minute, Slack: keepAll}))
	s, h := reserveOn(t, m, 1, 64<<10)
	require.NoError(t, h.Release())
	reserved := func() uint64 { return s.GPU.Usage().BytesReserved }
	require.NotZero(t, reserved())

	t0 := time.Now()
	assert.Equal(t, time.Minute, m.TrimIdle(t0), "first seen: busy from now, look again in a minute")
	assert.NotZero(t, reserved())
	assert.Equal(t, 20*time.Second, m.TrimIdle(t0.Add(40*time.Second)))
	assert.NotZero(t, reserved(), "idle for less than the policy's time")

	_, h = reserveOn(t, m, 1, 64<<10) // busy again
	require.NoError(t, h.Release())
	assert.Equal(t, time.Minute, m.TrimIdle(t0.Add(61*time.Second)), "a reservation since: busy from now")
	assert.NotZero(t, reserved())

	assert.Zero(t, m.TrimIdle(t0.Add(122*time.Second)), "nothing left to trim")
	assert.Zero(t, reserved(), "idle for the policy's time: its free pages went")
	assert.Zero(t, m.TrimIdle(t0.Add(200*time.Second)), "no free pages: nothing to look at later")
}

// TestTrimIdleKeepsLiveBuffers: a page with a live buffer stays whatever the rules say.
func TestTrimIdleKeepsLiveBuffers(t *testing.T) {
	m := newMulti(t, openCPU(t), stream.WithTrimPolicy(stream.TrimPolicy{}))
	s, h := reserveOn(t, m, 2, 64<<10)
	before := s.GPU.Usage()
	assert.Zero(t, m.TrimIdle(time.Now()))
	assert.Equal(t, before, s.GPU.Usage())
	require.NoError(t, h.Release())
	assert.Zero(t, m.TrimIdle(time.Now()))
	assert.Zero(t, s.GPU.Usage().BytesReserved)
}

// TestTrimIdleBound: past twice the bytes in use plus the slack, the free pages of busy
// streams go too.
func TestTrimIdleBound(t *testing.T) {
	m := newMulti(t, openCPU(t), stream.WithTrimPolicy(stream.TrimPolicy{Idle: time.Hour, Slack: 4 << 20}))
	busy, kept := reserveOn(t, m, 3, 64<<10)
	t.Cleanup(func() { require.NoError(t, kept.Release()) })
	var freed []*stream.Stream
	now := time.Now()
	for id := stream.ID(4); id < 8; id++ {
		s, h := reserveOn(t, m, id, 1<<20)
		require.NoError(t, h.Release())
		freed = append(freed, s)
		if id == 4 {
			// Two 2 MiB pages, 64 KiB in use: within 2 × 64 KiB + 4 MiB.
			assert.Equal(t, time.Hour, m.TrimIdle(now))
			assert.NotZero(t, s.GPU.Usage().BytesReserved, "within the bound: kept")
		}
	}
	assert.Zero(t, m.TrimIdle(now))
	for _, s := range freed {
		assert.Zero(t, s.GPU.Usage().BytesReserved, "stream %d's free page went", s.Slot())
	}
	assert.NotZero(t, busy.GPU.Usage().BytesReserved, "the page of a live buffer stays")
}

// TestTrimIdleLeavesCaptures: a stream in a capture keeps its pages: they are the graph's
// working set.
func TestTrimIdleLeavesCaptures(t *testing.T) {
	m := newMulti(t, openCPU(t), stream.WithTrimPolicy(stream.TrimPolicy{}))
	s, h := reserveOn(t, m, 8, 64<<10)
	require.NoError(t, h.Release())
	require.NoError(t, s.PrepareCapture())
	m.TrimIdle(time.Now())
	assert.NotZero(t, s.GPU.Usage().BytesReserved)
	_, err := s.AbortCapture()
	require.NoError(t, err)
	m.TrimIdle(time.Now())
	assert.Zero(t, s.GPU.Usage().BytesReserved)
}

// TestTrimIdleReturnsBorrowings: a released buffer that a finished stream borrowed is
// given back, and its page trimmed, without a fence.
func TestTrimIdleReturnsBorrowings(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p, stream.WithTrimPolicy(stream.TrimPolicy{}))
	sa, sb := lendOnce(t, m, 9, 10)
	require.NoError(t, p.StreamSynchronize(sb.Sys))
	m.TrimIdle(time.Now())
	assert.Zero(t, sa.GPU.Usage().BytesReserved)
}
