package faults

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// launcher is a platform without a queue of its own whose launches succeed, counted.
type launcher struct {
	absent
	launches int
}

func (l *launcher) ModuleLaunchKernel(hipsys.Function, hipsys.Dim3, hipsys.Dim3, uint32, hipsys.Stream, *hipsys.KernelArgs) error {
	l.launches++
	return nil
}

// The emulated queue issues every launch at once and holds an armed rule's failure back
// as a refusal, returned emulatedDepth launches later or by Settle, once.
func TestEmulatedQueue(t *testing.T) {
	inner := &launcher{}
	w := Wrap(inner)
	q, err := w.OpenLaunchQueue(0)
	require.NoError(t, err)
	_, err = w.OpenLaunchQueue(0)
	assert.ErrorIs(t, err, hipsys.ErrorContextAlreadyInUse, "one holder")

	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	launch := func() (uint64, []hipsys.LaunchRefusal) {
		seq, ref, err := q.Launch(0, one, one, 0, hipsys.NullStream, nil, nil)
		require.NoError(t, err, "a refusal is never returned by its own launch")
		return seq, ref
	}
	require.True(t, w.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	refusedSeq, ref := launch()
	assert.Empty(t, ref)
	assert.Equal(t, 0, inner.launches, "the failed launch never reached the platform")
	for i := 1; i <= emulatedDepth; i++ {
		seq, ref := launch()
		assert.Equal(t, refusedSeq+uint64(i), seq)
		if i < emulatedDepth {
			assert.Empty(t, ref)
		} else {
			require.Len(t, ref, 1, "returned by the launch emulatedDepth after it, the latest a queue may")
			assert.Equal(t, refusedSeq, ref[0].Seq)
			assert.ErrorIs(t, ref[0].Err, hipsys.ErrorLaunchFailure)
		}
	}
	assert.Equal(t, emulatedDepth, inner.launches)
	assert.Empty(t, q.Settle(nil), "returned once")

	require.True(t, w.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorInvalidValue))
	seq, _ := launch()
	ref = q.Settle(nil)
	require.Len(t, ref, 1)
	assert.Equal(t, seq, ref[0].Seq)

	require.True(t, w.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorInvalidValue))
	launch()
	err = q.Close()
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue, "Close reports what was not returned")
	assert.NoError(t, q.Close(), "a second Close is a no-op")
	_, _, err = q.Launch(0, one, one, 0, hipsys.NullStream, nil, nil)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle, "a closed queue launches nothing")
	q2, err := w.OpenLaunchQueue(0)
	require.NoError(t, err, "given back by Close")
	assert.NoError(t, q2.Close())
}
