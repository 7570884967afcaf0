package conformance

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func (s *suite) device(t *testing.T) {
	p := s.p
	count, err := p.GetDeviceCount()
	require.NoError(t, err)

	t.Run("properties", func(t *testing.T) {
		for d := range count {
			props, err := p.GetDeviceProperties(d)
			require.NoError(t, err, "device %d", d)
			assert.NotEmpty(t, props.Name, "device %d name", d)
			assert.Positive(t, props.WarpSize, "warp size")
			assert.GreaterOrEqual(t, props.MaxThreadsPerBlock, 1, "max threads per block")
			for i := range 3 {
				assert.Positive(t, props.MaxGridSize[i], "max grid size [%d]", i)
				assert.Positive(t, props.MaxThreadsDim[i], "max threads dim [%d]", i)
			}
			assert.Positive(t, props.TotalMem, "total memory")
			assert.Positive(t, props.MultiProcessorCount, "multiprocessors")
		}
	})

	t.Run("properties of a missing device", func(t *testing.T) {
		// hipErrorInvalidDevice (101) on AMD, and CUDA's INVALID_DEVICE is also 101.
		_, err := p.GetDeviceProperties(count)
		s.expect(t, err, "hipGetDeviceProperties", hipsys.ErrorInvalidDevice)
		_, err = p.GetDeviceProperties(-1)
		s.expect(t, err, "hipGetDeviceProperties", hipsys.ErrorInvalidDevice)
	})

	t.Run("set and get device", func(t *testing.T) {
		// The current device belongs to the OS thread, so the set and the get must run
		// on the same one.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s.expect(t, p.SetDevice(count), "hipSetDevice", hipsys.ErrorInvalidDevice)
		s.expect(t, p.SetDevice(-1), "hipSetDevice", hipsys.ErrorInvalidDevice)
		require.NoError(t, p.SetDevice(0))
		d, err := p.GetDevice()
		require.NoError(t, err)
		assert.Equal(t, 0, d)
	})

	t.Run("memory info", func(t *testing.T) {
		free, total, err := p.MemGetInfo()
		require.NoError(t, err)
		assert.Positive(t, total)
		assert.LessOrEqual(t, free, total)

		// A big allocation, touched so that no platform can leave it unbacked, must show
		// in the free figure. Drivers round to pages and other processes share the
		// device, so only half of it is required to show.
		size := min(uint64(256<<20), free/4)
		require.Positive(t, size, "no free device memory")
		ptr := s.malloc(t, size)
		require.NoError(t, p.Memset(ptr, 0x5a, size))
		require.NoError(t, p.DeviceSynchronize())
		after, total2, err := p.MemGetInfo()
		require.NoError(t, err)
		assert.Equal(t, total, total2, "total memory is fixed")
		assert.Less(t, after, free-size/2, "free memory dropped by less than half a %d-byte allocation", size)
	})

	t.Run("synchronize", func(t *testing.T) {
		assert.NoError(t, p.DeviceSynchronize())
	})
}
