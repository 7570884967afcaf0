package amd_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// standIn is registered as "cpu" when this test binary lacks the real cpu platform
// (the amd tests do not import it): it always has one device, as the real one does.
type standIn struct{ hipsys.Platform }

func (standIn) Name() string                 { return "cpu" }
func (standIn) GetDeviceCount() (int, error) { return 1, nil }

var registerStandIn = sync.OnceFunc(func() {
	if !slices.Contains(hipsys.Platforms(), "cpu") {
		hipsys.Register("cpu", func() (hipsys.Platform, error) { return standIn{}, nil })
	}
})

func TestAutoFallsBackWhenAMDHasNoDevice(t *testing.T) {
	amdp := real(t)
	if n, err := amdp.GetDeviceCount(); err == nil {
		t.Skipf("this machine has %d AMD GPU(s): auto picks amd", n)
	}
	registerStandIn()
	t.Setenv(hipsys.EnvPlatform, "")
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	assert.Equal(t, "cpu", p.Name())

	t.Setenv(hipsys.EnvPlatform, "amd")
	p, err = hipsys.Open("auto")
	require.NoError(t, err, "CUBEHIP_PLATFORM=amd opens amd even without a device")
	assert.Equal(t, "amd", p.Name())
}
