package amd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The peer calls reach ROCm's entry points with their arguments in HIP's order: the
// fake answers from its device count and copies with memcpy.
func TestPeerCallsReachHIP(t *testing.T) {
	t.Setenv("FAKE_HIP_DEVICES", "2")
	p := fakePlatform(t)

	ok, err := p.DeviceCanAccessPeer(0, 1)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = p.DeviceCanAccessPeer(1, 1)
	require.NoError(t, err)
	assert.False(t, ok, "a device is not its own peer")
	_, err = p.DeviceCanAccessPeer(0, 2)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidDevice)

	require.NoError(t, p.DeviceEnablePeerAccess(1, 0))
	assert.ErrorIs(t, p.DeviceEnablePeerAccess(1, 0), hipsys.ErrorPeerAccessAlreadyEnabled)
	assert.ErrorIs(t, p.DeviceEnablePeerAccess(1, 7), hipsys.ErrorInvalidValue)

	const n = 64
	src, err := p.Malloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(src)) }()
	dst, err := p.Malloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(dst)) }()
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(i * 3)
	}
	require.NoError(t, p.MemcpyHtoD(src, want))
	require.NoError(t, p.MemcpyPeerAsync(dst, 1, src, 0, n, hipsys.NullStream))
	got := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(got, dst))
	assert.Equal(t, want, got)

	// A range past the allocation never reaches HIP.
	err = p.MemcpyPeerAsync(dst, 1, src, 0, n+1, hipsys.NullStream)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
}
