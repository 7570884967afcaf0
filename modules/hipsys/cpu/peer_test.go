package cpu

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// newDevicesTest opens a platform of n devices and locks the test's goroutine to its
// thread, since the current device belongs to the thread.
func newDevicesTest(t *testing.T, n string) *Platform {
	t.Setenv(devicesEnv, n)
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	return newTest(t)
}

func TestDeviceCountComesFromTheEnvironment(t *testing.T) {
	p := newDevicesTest(t, "3")
	n, err := p.GetDeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	props, err := p.GetDeviceProperties(2)
	require.NoError(t, err)
	assert.Equal(t, 2, props.PCIDeviceID, "devices tell apart by their PCI id")
	_, err = p.GetDeviceProperties(3)
	requireStatus(t, err, "hipGetDeviceProperties", hipsys.ErrorInvalidDevice)
	requireStatus(t, p.SetDevice(-1), "hipSetDevice", hipsys.ErrorInvalidDevice)

	for _, bad := range []string{"0", "-2", "two", "65"} {
		t.Setenv(devicesEnv, bad)
		_, err := newPlatform()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), devicesEnv+`="`+bad+`"`)
	}
}

// The current device is per thread, and each device has its own memory budget and
// its own streams.
func TestDevicesKeepTheirOwnState(t *testing.T) {
	p := newDevicesTest(t, "2")
	require.NoError(t, p.SetDevice(1))
	d, _ := p.GetDevice()
	assert.Equal(t, 1, d)
	done := make(chan int)
	go func() { // a new thread starts on device 0
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		d, _ := p.GetDevice()
		done <- d
	}()
	assert.Equal(t, 0, <-done)

	a, err := p.Malloc(1 << 20)
	require.NoError(t, err)
	free1, _, _ := p.MemGetInfo()
	require.NoError(t, p.SetDevice(0))
	free0, total, _ := p.MemGetInfo()
	assert.Equal(t, total, free0, "device 1's allocation is not charged to device 0")
	assert.Less(t, free1, free0)
	require.NoError(t, p.Free(a))

	// A stream belongs to the device current at its creation.
	require.NoError(t, p.SetDevice(1))
	s1, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	assert.Equal(t, 1, p.streams.get(uintptr(s1)).dev)
	require.NoError(t, p.StreamDestroy(s1))
}

func TestPeerAccessRules(t *testing.T) {
	p := newDevicesTest(t, "3")
	ok, err := p.DeviceCanAccessPeer(0, 2)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = p.DeviceCanAccessPeer(1, 1)
	require.NoError(t, err)
	assert.False(t, ok, "a device is not its own peer")
	_, err = p.DeviceCanAccessPeer(0, 3)
	requireStatus(t, err, "hipDeviceCanAccessPeer", hipsys.ErrorInvalidDevice)

	require.NoError(t, p.DeviceEnablePeerAccess(2, 0))
	requireStatus(t, p.DeviceEnablePeerAccess(2, 0), "hipDeviceEnablePeerAccess", hipsys.ErrorPeerAccessAlreadyEnabled)
	requireStatus(t, p.DeviceEnablePeerAccess(0, 0), "hipDeviceEnablePeerAccess", hipsys.ErrorInvalidDevice)
	requireStatus(t, p.DeviceEnablePeerAccess(1, 1), "hipDeviceEnablePeerAccess", hipsys.ErrorInvalidValue)
	require.NoError(t, p.SetDevice(2))
	require.NoError(t, p.DeviceEnablePeerAccess(0, 0), "the pair's other direction is its own")
}

func TestMemcpyPeerAsyncChecksEachPointersDevice(t *testing.T) {
	p := newDevicesTest(t, "2")
	const n = 4096
	src, err := p.Malloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(src)) }()
	require.NoError(t, p.SetDevice(1))
	dst, err := p.Malloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Free(dst)) }()
	s, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.StreamDestroy(s)) }()

	want := make([]byte, n)
	for i := range want {
		want[i] = byte(i*7 + 1)
	}
	require.NoError(t, p.MemcpyHtoD(src, want))
	require.NoError(t, p.MemcpyPeerAsync(dst, 1, src, 0, n, s))
	require.NoError(t, p.StreamSynchronize(s))
	got := make([]byte, n)
	require.NoError(t, p.MemcpyDtoH(got, dst))
	assert.Equal(t, want, got)

	const call = "hipMemcpyPeerAsync"
	requireStatus(t, p.MemcpyPeerAsync(dst, 0, src, 0, n, s), call, hipsys.ErrorInvalidValue)
	requireStatus(t, p.MemcpyPeerAsync(dst, 1, src, 1, n, s), call, hipsys.ErrorInvalidValue)
	requireStatus(t, p.MemcpyPeerAsync(dst, 1, src, 0, n+1, s), call, hipsys.ErrorInvalidValue)
	requireStatus(t, p.MemcpyPeerAsync(dst, 2, src, 0, n, s), call, hipsys.ErrorInvalidDevice)
}
