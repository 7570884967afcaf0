package stream_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/stream"
)

var (
	errBoom  = errors.New("boom")
	errOther = errors.New("other")
)

func TestFailuresClaimReleaseTaint(t *testing.T) {
	hb := newHostBuffers(t)
	var f stream.Failures
	a, b, c := hb.binding(0, 64), hb.binding(0, 64), hb.binding(1, 64)

	assert.NoError(t, f.EnsureWritten([]stream.Binding{a, b, c}), "a fresh store holds nothing")

	f.Claim([]stream.Binding{a})
	assert.ErrorIs(t, f.EnsureWritten([]stream.Binding{b, a}), stream.ErrUnsettled)
	assert.NoError(t, f.EnsureWritten([]stream.Binding{b, c}), "unrelated buffers stay readable")

	f.Taint(errBoom, []stream.Binding{a})
	assert.ErrorIs(t, f.EnsureWritten([]stream.Binding{a}), errBoom, "taint replaces the claim")

	f.Claim([]stream.Binding{a})
	assert.ErrorIs(t, f.EnsureWritten([]stream.Binding{a}), stream.ErrUnsettled, "a claim replaces a failure")
	f.Release([]stream.Binding{a})
	assert.NoError(t, f.EnsureWritten([]stream.Binding{a}))
	assert.Zero(t, f.Len())

	f.Taint(nil, []stream.Binding{a})
	assert.Zero(t, f.Len(), "a nil error taints nothing")
}

func TestFailuresPerAllocation(t *testing.T) {
	// Differs from CubeCL: every view of one allocation shares
	// its fate, whatever its offsets.
	hb := newHostBuffers(t)
	whole := hb.binding(0, 1024)
	view := whole
	require.NoError(t, view.Narrow(512, 0))

	var f stream.Failures
	f.Taint(errBoom, []stream.Binding{view})
	assert.ErrorIs(t, f.EnsureWritten([]stream.Binding{whole}), errBoom)
}

func TestFailuresShedWhenAllocationDies(t *testing.T) {
	hb := newHostBuffers(t)
	h, err := hb.mgr.Reserve(64)
	require.NoError(t, err)
	mb, err := h.Binding()
	require.NoError(t, err)
	b := stream.Binding{Binding: mb, Stream: 0}

	var f stream.Failures
	f.Taint(errBoom, []stream.Binding{b})
	f.ShedDead()
	assert.Equal(t, 1, f.Len(), "a live allocation keeps its failure")

	require.NoError(t, b.Release())
	require.NoError(t, h.Release())
	hb.mgr.Cleanup() // the pool drops the slice: the allocation is dead
	f.ShedDead()
	assert.Zero(t, f.Len(), "the dead allocation's entry is shed")

	f.Taint(errBoom, []stream.Binding{hb.binding(0, 64)})
	f.Shed(hb.hs[len(hb.hs)-1].ID())
	assert.Zero(t, f.Len())
}

// recorder is a failure hook that remembers what it was told.
type recorder struct {
	calls []error
}

func (r *recorder) hook(_ stream.ID, err error) { r.calls = append(r.calls, err) }

// TestCaseTableScopes is §2.5's case table at the level of the write scopes, one row per
// subtest: what each situation claims or taints, and what it returns. The rows where a
// HIP call fails are driven through fault injection on the cpu platform in
// TestCaseTableCPU.
func TestCaseTableScopes(t *testing.T) {
	type bufs struct{ in, out, other stream.Binding }
	tests := []struct {
		name     string
		run      func(m *stream.MultiStream, b bufs) error
		wantErr  error // returned by the call
		outErr   error // what a read of out then reports (nil: readable)
		inErr    error // what a read of in then reports
		otherErr error
		hooks    int
	}{
		{
			name: "write pair fails: destination tainted",
			run: func(m *stream.MultiStream, b bufs) error {
				return m.Over(0, []stream.Binding{b.out}).Execute(func() error { return errBoom })
			},
			wantErr: errBoom, outErr: errBoom, hooks: 1,
		},
		{
			name: "write pair succeeds: destination released",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errOther, b.out)
				return m.Over(0, []stream.Binding{b.out}).Execute(func() error { return nil })
			},
		},
		{
			name: "compile fails (execute): declared outputs only",
			run: func(m *stream.MultiStream, b bufs) error {
				m.FailedWriting(0, []stream.Binding{b.out}, errBoom)
				return nil
			},
			outErr: errBoom, hooks: 1,
		},
		{
			name: "compile fails (dry run): nothing tainted, profiles invalidated",
			run: func(m *stream.MultiStream, b bufs) error {
				m.FailedWriting(0, nil, errBoom)
				return nil
			},
			hooks: 1,
		},
		{
			name: "dynamic count buffer tainted: outputs take its failure",
			run: func(m *stream.MultiStream, b bufs) error {
				count := b.other
				m.Taint(errOther, count)
				if err := m.EnsureWritten(count); err != nil {
					m.FailedWriting(0, []stream.Binding{b.out}, err)
				}
				return nil
			},
			outErr: errOther, otherErr: errOther, hooks: 1,
		},
		{
			name: "count resolves to zero: no scope, an earlier claim stays",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errOther, b.out)
				return nil // the launch returns before opening a scope
			},
			outErr: errOther,
		},
		{
			name: "input tainted: launch skipped, outputs inherit",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errOther, b.in)
				return m.Launching(0, []stream.Binding{b.in}, []stream.Binding{b.out}).Execute(func() error {
					panic("the body of a launch with a tainted input must not run")
				})
			},
			wantErr: errOther, outErr: errOther, inErr: errOther, hooks: 1,
		},
		{
			name: "launch fails: outputs tainted, inputs untouched",
			run: func(m *stream.MultiStream, b bufs) error {
				return m.Launching(0, []stream.Binding{b.in}, []stream.Binding{b.out}).Execute(func() error { return errBoom })
			},
			wantErr: errBoom, outErr: errBoom, hooks: 1,
		},
		{
			name: "launch enqueued: outputs released",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errOther, b.out)
				return m.Launching(0, []stream.Binding{b.in}, []stream.Binding{b.out}).Execute(func() error { return nil })
			},
		},
		{
			name: "end_capture refused: written tainted, no hook",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errBoom, b.out, b.in)
				return errBoom
			},
			wantErr: errBoom, outErr: errBoom, inErr: errBoom,
		},
		{
			name: "replay fails, then a later replay settles",
			run: func(m *stream.MultiStream, b bufs) error {
				set := []stream.Binding{b.out, b.other}
				err := m.Over(0, set).Execute(func() error { return errBoom })
				if !errors.Is(err, errBoom) || !errors.Is(m.EnsureWritten(b.other), errBoom) {
					return errors.New("the failed replay did not taint its write set")
				}
				return m.Over(0, set).Execute(func() error { return nil })
			},
			hooks: 1,
		},
		{
			name: "graph_destroy's wait fails: the graph's write set only",
			run: func(m *stream.MultiStream, b bufs) error {
				m.FailedWriting(0, []stream.Binding{b.out}, errBoom)
				return nil
			},
			outErr: errBoom, hooks: 1,
		},
		{
			name: "opened scope, input tainted: Begin refuses, outputs inherit",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errOther, b.in)
				_, err := m.Launching(0, []stream.Binding{b.in}, []stream.Binding{b.out}).Begin()
				return err
			},
			wantErr: errOther, outErr: errOther, inErr: errOther, hooks: 1,
		},
		{
			name: "opened scope, work fails: End taints the outputs",
			run: func(m *stream.MultiStream, b bufs) error {
				o, err := m.Launching(0, []stream.Binding{b.in}, []stream.Binding{b.out}).Begin()
				if err != nil {
					return err
				}
				return o.End(errBoom)
			},
			wantErr: errBoom, outErr: errBoom, hooks: 1,
		},
		{
			name: "opened scope, work enqueued: End releases the outputs",
			run: func(m *stream.MultiStream, b bufs) error {
				m.Taint(errOther, b.out)
				o, err := m.Launching(0, []stream.Binding{b.in}, []stream.Binding{b.out}).Begin()
				if err != nil {
					return err
				}
				return o.End(nil)
			},
		},
		{
			name: "opened scope abandoned (the work panicked): the claim stays",
			run: func(m *stream.MultiStream, b bufs) error {
				o, err := m.Over(0, []stream.Binding{b.out}).Begin()
				if err != nil {
					return err
				}
				o.Abandon()
				return nil
			},
			outErr: stream.ErrUnsettled,
		},
		{
			name: "a panicking body leaves the claim",
			run: func(m *stream.MultiStream, b bufs) (err error) {
				defer func() { _ = recover() }()
				return m.Over(0, []stream.Binding{b.out}).Execute(func() error { panic("mid-enqueue") })
			},
			outErr: stream.ErrUnsettled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hb := newHostBuffers(t)
			m := newMulti(t, nil)
			var rec recorder
			m.SetFailureHook(rec.hook)
			b := bufs{in: hb.binding(0, 64), out: hb.binding(0, 64), other: hb.binding(1, 64)}

			err := tt.run(m, b)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			} else {
				assert.NoError(t, err)
			}
			check := func(what string, bb stream.Binding, want error) {
				got := m.EnsureWritten(bb)
				if want == nil {
					assert.NoError(t, got, what)
				} else {
					assert.ErrorIs(t, got, want, what)
				}
			}
			check("out", b.out, tt.outErr)
			check("in", b.in, tt.inErr)
			check("other", b.other, tt.otherErr)
			assert.Len(t, rec.calls, tt.hooks, "failure hook calls")
		})
	}
}
