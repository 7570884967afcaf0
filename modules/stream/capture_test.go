package stream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/stream"
)

func TestCaptureTransitions(t *testing.T) {
	type step struct {
		op      string // prepare, begin, end, abort
		wantErr string // "" for success
	}
	tests := []struct {
		name  string
		steps []step
		final stream.CaptureState
	}{
		{"full cycle", []step{{"prepare", ""}, {"begin", ""}, {"end", ""}}, stream.CaptureNone},
		{"begin without prepare", []step{{"begin", "begin_capture: call graph_prepare before starting a capture"}}, stream.CaptureNone},
		{"prepare twice", []step{{"prepare", ""}, {"prepare", "graph_prepare: a graph capture is already prepared on this stream"}}, stream.CapturePrepare},
		{"prepare while recording", []step{{"prepare", ""}, {"begin", ""}, {"prepare", "graph_prepare: a graph capture is already recording on this stream"}}, stream.CaptureRecording},
		{"begin twice", []step{{"prepare", ""}, {"begin", ""}, {"begin", "begin_capture: a graph capture is already recording on this stream"}}, stream.CaptureRecording},
		{"end without capture", []step{{"end", "end_capture: no graph capture is recording on this stream"}}, stream.CaptureNone},
		{"end while preparing", []step{{"prepare", ""}, {"end", "end_capture: no graph capture is recording on this stream"}}, stream.CapturePrepare},
		{"abort from prepare, capture again", []step{{"prepare", ""}, {"abort", ""}, {"prepare", ""}, {"begin", ""}}, stream.CaptureRecording},
		{"abort from recording, capture again", []step{{"prepare", ""}, {"begin", ""}, {"abort", ""}, {"prepare", ""}}, stream.CapturePrepare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c stream.Capture
			for _, s := range tt.steps {
				before := c.State()
				var err error
				switch s.op {
				case "prepare":
					err = c.Prepare()
				case "begin":
					err = c.Begin()
				case "end":
					err = c.End()
				case "abort":
					c.Abort()
				}
				if s.wantErr == "" {
					require.NoError(t, err, s.op)
					continue
				}
				require.Error(t, err, s.op)
				assert.EqualError(t, err, s.wantErr)
				assert.ErrorIs(t, err, stream.ErrGraphState)
				assert.Equal(t, before, c.State(), "a rejected transition changes nothing")
			}
			assert.Equal(t, tt.final, c.State())
		})
	}
}

func TestCaptureModes(t *testing.T) {
	var c stream.Capture
	assert.Equal(t, stream.CacheNormal, c.CacheMode())
	assert.False(t, c.IsRecording())
	require.NoError(t, c.Prepare())
	assert.Equal(t, stream.CacheCapture, c.CacheMode(), "the warm-up fills the cache for the recorded run")
	assert.False(t, c.IsRecording(), "the warm-up executes")
	require.NoError(t, c.Begin())
	assert.Equal(t, stream.CacheCapture, c.CacheMode())
	assert.True(t, c.IsRecording())
	require.NoError(t, c.End())
	assert.Equal(t, stream.CacheNormal, c.CacheMode())
}

func TestCaptureWriteSet(t *testing.T) {
	hb := newHostBuffers(t)
	a, b := hb.binding(0, 64), hb.binding(0, 64)
	m := newMulti(t, nil)
	var c stream.Capture

	c.Record([]stream.Binding{a})
	w, _ := c.Take()
	assert.Empty(t, w, "nothing is recorded outside a recording")

	require.NoError(t, c.Prepare())
	c.Record([]stream.Binding{a})
	require.NoError(t, c.Begin())
	for range 3 {
		c.Record([]stream.Binding{a, b})
	}
	require.NoError(t, c.End())
	w, _ = c.Take()
	require.Len(t, w, 2, "each buffer once, however many launches wrote it")
	assert.Equal(t, a.ID(), w[0].ID())
	assert.Equal(t, b.ID(), w[1].ID())
	_ = m
}
