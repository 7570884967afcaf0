package conformance

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// imports checks ImportMemory and ReleaseImportedMemory: memory the platform did not
// hand out through the range being imported (here, a range inside another allocation,
// as CuPy's pool hands out) is taken by copies while imported; bad ranges, memory that
// is not device memory and memory of another device are refused with the statuses the
// Platform contract names.
func (s *suite) imports(t *testing.T) {
	p := s.p
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, p.SetDevice(0))

	t.Run("inside an allocation", func(t *testing.T) {
		ptr := s.malloc(t, 4096)
		require.NoError(t, p.ImportMemory(ptr+256, 1024))
		require.NoError(t, p.ImportMemory(ptr+256, 1024), "one range imported twice (two arrays over one tensor)")
		require.NoError(t, p.MemcpyHtoD(ptr+256, pattern(1024, 3)))
		assert.Equal(t, pattern(1024, 3), s.download(t, ptr+256, 1024))
		require.NoError(t, p.ReleaseImportedMemory(ptr+256, 1024))
		require.NoError(t, p.ReleaseImportedMemory(ptr+256, 1024))
		s.expect(t, p.ReleaseImportedMemory(ptr+256, 1024), "hipReleaseImportedMemory", hipsys.ErrorInvalidValue)
	})

	t.Run("bad ranges", func(t *testing.T) {
		ptr := s.malloc(t, 4096)
		s.expect(t, p.ImportMemory(0, 16), "hipImportMemory", hipsys.ErrorInvalidValue)
		s.expect(t, p.ImportMemory(ptr, 0), "hipImportMemory", hipsys.ErrorInvalidValue)
		s.expect(t, p.ImportMemory(^hipsys.DevicePtr(0)-7, 64), "hipImportMemory", hipsys.ErrorInvalidValue)
		s.expect(t, p.ImportMemory(ptr+64, 1<<40), "hipImportMemory", hipsys.ErrorInvalidValue)
	})

	t.Run("not device memory", func(t *testing.T) {
		if p.Name() == "cpu" {
			// The cpu device's memory is host memory: only unmapped addresses are refused.
			s.expect(t, p.ImportMemory(4096, 4096), "hipImportMemory", hipsys.ErrorInvalidValue)
			return
		}
		h, err := p.HostMalloc(4096, hipsys.HostMallocDefault)
		require.NoError(t, err)
		defer func() { assert.NoError(t, p.HostFree(h)) }()
		s.expect(t, p.ImportMemory(hipsys.DevicePtr(h), 4096), "hipImportMemory", hipsys.ErrorInvalidValue)
	})

	t.Run("another device", func(t *testing.T) {
		n, err := p.GetDeviceCount()
		require.NoError(t, err)
		if n < 2 {
			t.Skipf("needs two devices; %s has %d", p.Name(), n)
		}
		require.NoError(t, p.SetDevice(1))
		other := s.malloc(t, 4096)
		require.NoError(t, p.SetDevice(0))
		s.expect(t, p.ImportMemory(other, 4096), "hipImportMemory", hipsys.ErrorInvalidDevice)
	})
}
