package cpu

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

// newTest opens a fresh platform and, at the end of the test, checks that the test
// released every handle and allocation it made, then stops the platform's workers.
func newTest(t testing.TB) *Platform {
	t.Helper()
	p, err := newPlatform()
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.True(t, p.Live().IsZero(), "leaked: %s", p.Live())
		assert.Zero(t, p.device.usedBytes(), "leaked device memory")
		assert.Zero(t, p.host.usedBytes(), "leaked host memory")
		for _, s := range p.allStreams() {
			s.shutdown()
		}
	})
	return p
}

// requireStatus checks that err is a cpu *hipsys.Error for call with status want.
func requireStatus(t testing.TB, err error, call string, want hipsys.Status) {
	t.Helper()
	require.Error(t, err)
	var he *hipsys.Error
	require.True(t, errors.As(err, &he), "not a *hipsys.Error: %v", err)
	assert.Equal(t, "cpu", he.Platform)
	assert.Equal(t, call, he.Call)
	assert.Equal(t, want, he.Status, "%v", err)
	assert.ErrorIs(t, err, want)
}

// gate queues a command that blocks stream s until the returned func is called, so a
// test controls exactly when the stream's later work may run.
func gate(t testing.TB, s *stream) (open func()) {
	t.Helper()
	ch := make(chan struct{})
	c := command{kind: cmdHost, host: func() { <-ch }}
	require.NoError(t, s.enqueue("test", &c))
	opened := false
	return func() {
		if !opened {
			opened = true
			close(ch)
		}
	}
}

func TestRegistered(t *testing.T) {
	assert.Contains(t, hipsys.Platforms(), "cpu")
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	assert.Equal(t, "cpu", p.Name())
}

func TestDevice(t *testing.T) {
	p := newTest(t)
	n, err := p.GetDeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	props, err := p.GetDeviceProperties(0)
	require.NoError(t, err)
	assert.NotEmpty(t, props.Name)
	assert.NotEmpty(t, props.ArchName)
	assert.Equal(t, jit.WarpSize, props.WarpSize) // 32 unless $CUBEHIP_CPU_WARP_SIZE asks for 64
	assert.Positive(t, props.MultiProcessorCount)
	assert.Positive(t, props.TotalMem)
	assert.True(t, props.Integrated)
	assert.Equal(t, [3]int{2147483647, 65535, 65535}, props.MaxGridSize)
	assert.Equal(t, [3]int{1024, 1024, 64}, props.MaxThreadsDim)
	assert.Equal(t, maxThreadsPerBlock, props.MaxThreadsPerBlock)

	require.NoError(t, p.SetDevice(0))
	d, err := p.GetDevice()
	require.NoError(t, err)
	assert.Zero(t, d)

	free, total, err := p.MemGetInfo()
	require.NoError(t, err)
	assert.Equal(t, props.TotalMem, total)
	assert.Equal(t, total, free)
	require.NoError(t, p.DeviceSynchronize())

	for _, bad := range []int{-1, 1, 7} {
		requireStatus(t, p.SetDevice(bad), "hipSetDevice", hipsys.ErrorInvalidDevice)
		_, err := p.GetDeviceProperties(bad)
		requireStatus(t, err, "hipGetDeviceProperties", hipsys.ErrorInvalidDevice)
	}
}
