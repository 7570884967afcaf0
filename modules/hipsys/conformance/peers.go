package conformance

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// peers checks the PeerAPI: the rules every platform shares, a peer copy within device
// 0 (which one GPU can run), and, on a platform of several devices, a copy between
// every pair that reaches each other.
func (s *suite) peers(t *testing.T) {
	p := s.p
	count, err := p.GetDeviceCount()
	require.NoError(t, err)

	t.Run("rules", func(t *testing.T) {
		ok, err := p.DeviceCanAccessPeer(0, 0)
		require.NoError(t, err)
		assert.False(t, ok, "a device is not its own peer")
		_, err = p.DeviceCanAccessPeer(0, count)
		s.expect(t, err, "hipDeviceCanAccessPeer", hipsys.ErrorInvalidDevice)
		_, err = p.DeviceCanAccessPeer(-1, 0)
		s.expect(t, err, "hipDeviceCanAccessPeer", hipsys.ErrorInvalidDevice)

		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		require.NoError(t, p.SetDevice(0))
		s.expect(t, p.DeviceEnablePeerAccess(0, 0), "hipDeviceEnablePeerAccess", hipsys.ErrorInvalidDevice)
		s.expect(t, p.DeviceEnablePeerAccess(count, 0), "hipDeviceEnablePeerAccess", hipsys.ErrorInvalidDevice)
		if count > 1 {
			s.expect(t, p.DeviceEnablePeerAccess(1, 1), "hipDeviceEnablePeerAccess", hipsys.ErrorInvalidValue)
		}
	})

	t.Run("copy within device 0", func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		require.NoError(t, p.SetDevice(0))
		want := bytePattern(1 << 20)
		src := s.upload(t, want)
		dst := s.malloc(t, uint64(len(want)))
		st := s.stream(t, hipsys.StreamNonBlocking)
		require.NoError(t, p.MemcpyPeerAsync(dst, 0, src, 0, uint64(len(want)), st))
		s.sync(t, st)
		got := make([]byte, len(want))
		require.NoError(t, p.MemcpyDtoH(got, dst))
		assert.Equal(t, want, got)
		s.expect(t, p.MemcpyPeerAsync(dst, count, src, 0, 16, st), "hipMemcpyPeerAsync", hipsys.ErrorInvalidDevice)
	})

	t.Run("copy between devices", func(t *testing.T) {
		if count < 2 {
			t.Skipf("needs two devices; %s has %d", p.Name(), count)
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for from := range count {
			for to := range count {
				if from == to {
					continue
				}
				ok, err := p.DeviceCanAccessPeer(to, from)
				require.NoError(t, err)
				require.NoError(t, p.SetDevice(from))
				want := bytePattern(1<<20 + from*7 + to)
				src := s.upload(t, want)
				require.NoError(t, p.SetDevice(to))
				if ok {
					// Enabled once per pair and process: a second suite run finds it so.
					if err := p.DeviceEnablePeerAccess(from, 0); err != nil && !errors.Is(err, hipsys.ErrorPeerAccessAlreadyEnabled) {
						require.NoError(t, err, "enable %d to %d", to, from)
					}
				}
				dst := s.malloc(t, uint64(len(want)))
				st := s.stream(t, hipsys.StreamNonBlocking)
				require.NoError(t, p.MemcpyPeerAsync(dst, to, src, from, uint64(len(want)), st), "%d to %d", from, to)
				s.sync(t, st)
				got := make([]byte, len(want))
				require.NoError(t, p.MemcpyDtoH(got, dst))
				assert.Equal(t, want, got, "%d to %d", from, to)
			}
		}
		require.NoError(t, p.SetDevice(0))
	})
}

// bytePattern is n bytes that a copy of the wrong range or direction would not match.
func bytePattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>8 + 5)
	}
	return b
}
