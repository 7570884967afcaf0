package amd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// standIn is the platform registered as "cpu" in this test binary (the real cpu package
// is not imported here, so the name is free): it always has one device.
type standIn struct{ hipsys.Platform }

func (standIn) Name() string                 { return "cpu" }
func (standIn) GetDeviceCount() (int, error) { return 1, nil }

func init() {
	hipsys.Register("cpu", func() (hipsys.Platform, error) { return standIn{}, nil })
}

func TestAutoFallsBackWhenAMDHasNoDevice(t *testing.T) {
	amdp := real(t)
	if n, err := amdp.GetDeviceCount(); err == nil {
		t.Skipf("this machine has %d AMD GPU(s): auto picks amd", n)
	}
	t.Setenv(hipsys.EnvPlatform, "")
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	assert.Equal(t, "cpu", p.Name())

	t.Setenv(hipsys.EnvPlatform, "amd")
	p, err = hipsys.Open("auto")
	require.NoError(t, err, "CUBEHIP_PLATFORM=amd opens amd even without a device")
	assert.Equal(t, "amd", p.Name())
}
