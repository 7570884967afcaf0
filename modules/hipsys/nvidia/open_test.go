package nvidia

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// device opens the platform, or skips the test where there is no NVIDIA driver or GPU:
// that is a missing machine, not a failure of this package.
func device(t testing.TB) *Platform {
	t.Helper()
	p, err := Open()
	if errors.Is(err, dl.ErrNotFound) || errors.Is(err, hipsys.ErrorNoDevice) {
		t.Skipf("no NVIDIA GPU here: %v", err)
	}
	require.NoError(t, err)
	n, err := p.GetDeviceCount()
	require.NoError(t, err)
	if n == 0 {
		t.Skip("no NVIDIA GPU here: the driver reports no device")
	}
	return p.(*Platform)
}

// Without a driver, Open fails with an error naming the library, which is how auto
// moves on to the next platform.
func TestOpenWithoutDriverNamesLibcuda(t *testing.T) {
	if lib, err := dl.Open(cudaLibrary); err == nil {
		t.Skipf("%s is installed here; the missing-driver path cannot be exercised", lib.Name)
	}
	p, err := Open()
	require.Error(t, err)
	assert.Nil(t, p)
	assert.ErrorIs(t, err, dl.ErrNotFound)
	assert.Contains(t, err.Error(), "libcuda.so.1")
	assert.Contains(t, err.Error(), "nvidia")

	_, err = hipsys.Open("nvidia")
	assert.ErrorContains(t, err, "libcuda.so.1", "registered under its name")
}

func TestRegistered(t *testing.T) {
	assert.Contains(t, hipsys.Platforms(), "nvidia")
}

func TestNVRTCLibraryNames(t *testing.T) {
	names := nvrtcLibraryNames()
	assert.Equal(t, "libnvrtc.so", names[0])
	for _, want := range []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"} {
		assert.Contains(t, names, want)
	}
}
