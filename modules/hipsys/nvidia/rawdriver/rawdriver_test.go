package rawdriver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/cpu"
)

func TestOpenRejectsANegativeDevice(t *testing.T) {
	_, err := Open(-1)
	assert.ErrorContains(t, err, "device -1")
}

func TestLoopsRejectBadCounts(t *testing.T) {
	d := &Driver{} // never reaches the driver: the count is checked first
	for _, n := range []int{0, -5, 1<<30 + 1} {
		_, err := d.LaunchLoop(0, 0, n)
		assert.ErrorContains(t, err, "iterations", "n = %d", n)
		_, err = d.ReadLoop(0, n)
		assert.ErrorContains(t, err, "iterations", "n = %d", n)
	}
}

func TestFakeParamsBounded(t *testing.T) {
	require.NoError(t, FakeSetParams(make([]FakeParam, 64)))
	assert.ErrorContains(t, FakeSetParams(make([]FakeParam, 65)), "65 fake parameters")
}

func TestFakeLaunchRecords(t *testing.T) {
	FakeReset(0, 0)
	assert.Empty(t, FakeCalls())
	assert.NotNil(t, FakeLaunchEntry())
	assert.NotNil(t, FakeParamInfoEntry())
	assert.NotZero(t, ThreadSelf())
}

// The loops are the CUDA driver's: any other platform has none, and no error.
func TestForAnotherPlatformIsNil(t *testing.T) {
	p, err := cpu.Open()
	require.NoError(t, err)
	d, err := For(p)
	require.NoError(t, err)
	assert.Nil(t, d)
}
