package stream_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/stream"
)

// TestQuickAdmitsOnlyNoOpScopes: Quick takes a command only when the full path's
// checks, claims, waits, pins, marks and capture record would all do nothing, and
// declines, changing nothing, in each case where one of them would not.
func TestQuickAdmitsOnlyNoOpScopes(t *testing.T) {
	p := openCPU(t)
	m := newMulti(t, p)
	const home, other stream.ID = 1, 2
	x := newDeviceBuffer(t, m, home, 64)
	y := newDeviceBuffer(t, m, other, 64)
	src := pinned(t, p, make([]byte, 64))
	st, err := m.Stream(home)
	require.NoError(t, err)

	before := st.Cursor()
	got := m.Quick(home, []stream.Binding{x.b})
	require.Same(t, st, got, "home buffers, empty stores, no capture")
	assert.Equal(t, before+1, st.Cursor(), "the cursor advances as Resolve's does")
	got.QuickDone(true)

	cases := []struct {
		name string
		id   stream.ID
		bs   []stream.Binding
		arm  func() (undo func())
	}{
		{"a stream not created yet", 3, nil, nil},
		{"a buffer from another stream's pools", home, []stream.Binding{x.b, y.b}, nil},
		{"a failure in the store", home, []stream.Binding{x.b}, func() func() {
			m.Taint(errors.New("boom"), y.b)
			return func() { m.Failures().Release([]stream.Binding{y.b}) }
		}},
		{"a write away from home marked", home, []stream.Binding{x.b}, func() func() {
			require.NoError(t, upload(m, other, x, src, 64))
			return func() { require.NoError(t, upload(m, home, x, src, 64)) }
		}},
		{"a capture prepared", home, []stream.Binding{x.b}, func() func() {
			require.NoError(t, st.Capture.Prepare())
			return func() { st.Capture.Abort() }
		}},
	}
	for _, tc := range cases {
		undo := func() {}
		if tc.arm != nil {
			undo = tc.arm()
		}
		c := st.Cursor()
		assert.Nil(t, m.Quick(tc.id, tc.bs), tc.name)
		assert.Equal(t, c, st.Cursor(), "%s: a declined command changes nothing", tc.name)
		undo()
		if tc.id == home {
			s := m.Quick(home, tc.bs[:1])
			assert.NotNil(t, s, "%s: admitted again once undone", tc.name)
			if s != nil {
				s.QuickDone(false)
			}
		}
	}
}

// TestQuickLeavesCursorsAsTheFullPath: a command through Quick and QuickDone leaves the
// stream's cursors where Launching, Execute, Resolve and Close leave them, with and
// without outputs, so stamps and cross-stream waits cannot tell the paths apart.
func TestQuickLeavesCursorsAsTheFullPath(t *testing.T) {
	p := openCPU(t)
	for _, wrote := range []bool{false, true} {
		full, quick := newMulti(t, p), newMulti(t, p)
		xf := newDeviceBuffer(t, full, 1, 64)
		xq := newDeviceBuffer(t, quick, 1, 64)
		var writtenF []stream.Binding
		if wrote {
			writtenF = []stream.Binding{xf.b}
		}
		require.NoError(t, full.Launching(1, nil, writtenF).Execute(func() error {
			r, err := full.Resolve(1, []stream.Binding{xf.b})
			if err != nil {
				return err
			}
			return r.Close()
		}))
		s := quick.Quick(1, []stream.Binding{xq.b})
		require.NotNil(t, s)
		s.QuickDone(wrote)

		sf, err := full.Stream(1)
		require.NoError(t, err)
		assert.Equal(t, sf.Cursor(), s.Cursor(), "wrote=%v: cursor", wrote)
		// done is observed through another stream's wait: it orders after exactly the
		// commands done, which LastSynced records.
		rf, err := full.Resolve(2, []stream.Binding{xf.b})
		require.NoError(t, err)
		require.NoError(t, rf.Close())
		rq, err := quick.Resolve(2, []stream.Binding{xq.b})
		require.NoError(t, err)
		require.NoError(t, rq.Close())
		assert.NotZero(t, rq.Stream().LastSynced(s.Slot()), "wrote=%v: stream 2 waited for stream 1", wrote)
		assert.Equal(t, rf.Stream().LastSynced(sf.Slot()), rq.Stream().LastSynced(s.Slot()), "wrote=%v: done", wrote)
	}
}
