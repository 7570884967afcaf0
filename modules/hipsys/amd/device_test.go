package amd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestDevicePropertiesFromEachLayout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		defines []string
		layout  layout
	}{
		{"ROCm 5 hipDeviceProp_t", nil, propsR0000},
		{"ROCm 6 hipDeviceProp_tR0600", []string{"-DR0600"}, propsR0600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlatform(t, tc.defines...)
			assert.Equal(t, tc.layout, p.lib.s.propsLayout)
			n, err := p.GetDeviceCount()
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			d, err := p.GetDeviceProperties(0)
			require.NoError(t, err)
			assert.Equal(t, "Fake Instinct", d.Name)
			assert.Equal(t, "gfx90a:sramecc+:xnack-", d.ArchName)
			assert.Equal(t, 64, d.WarpSize)
			assert.Equal(t, uint64(64<<30), d.TotalMem)
			// The fake answers each attribute with its own number, which pins the numbers.
			assert.Equal(t, [3]int{26, 27, 28}, d.MaxThreadsDim)
			assert.Equal(t, [3]int{29, 30, 31}, d.MaxGridSize)
			assert.Equal(t, 56, d.MaxThreadsPerBlock)
			assert.Equal(t, 63, d.MultiProcessorCount)
			assert.Equal(t, uint64(10002), d.MaxSharedMemPerMultiProcessor)
			assert.Equal(t, [2]int{23, 61}, [2]int{d.Major, d.Minor})

			_, err = p.GetDeviceProperties(3)
			assert.ErrorIs(t, err, hipsys.ErrorInvalidDevice)
		})
	}
}

func TestNoDeviceIsHipErrorNoDeviceWithReason(t *testing.T) {
	t.Setenv("FAKE_HIP_DEVICES", "0")
	p := fakePlatform(t)
	n, err := p.GetDeviceCount()
	assert.Zero(t, n)
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "hipGetDeviceCount", he.Call)
	assert.Equal(t, hipsys.ErrorNoDevice, he.Status)
	assert.Contains(t, err.Error(), "amd: hipGetDeviceCount: hipErrorNoDevice (100): no AMD GPU visible (")
}

func TestLayoutRejectsAStructItDoesNotKnow(t *testing.T) {
	buf := make([]byte, 2048)
	buf[propsR0600.warpOff] = 64
	copy(buf[propsR0600.archOff:], "gfx1100")
	arch, err := propsR0600.arch(buf, 64)
	require.NoError(t, err)
	assert.Equal(t, "gfx1100", arch)

	_, err = propsR0000.arch(buf, 64) // the other layout's offsets read zeros
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hipGetDeviceProperties did not fill the expected layout")
	_, err = propsR0600.arch(buf, 32) // warp size disagrees with the attribute
	assert.Error(t, err)
}

func TestWarpSizeMatchesArchitecture(t *testing.T) {
	for _, tc := range []struct {
		arch string
		warp int
		ok   bool
	}{
		{"gfx90a:sramecc+:xnack-", 64, true},
		{"gfx908", 64, true},
		{"gfx942", 64, true},
		{"gfx803", 64, true},
		{"gfx1030", 32, true},
		{"gfx1100", 32, true},
		{"gfx1201", 32, true},
		{"gfx90a", 32, false},
		{"gfx1100", 64, false},
		{"sm_90", 32, true}, // not an AMD name: nothing to check
	} {
		err := CheckWarpSize(tc.arch, tc.warp)
		if tc.ok {
			assert.NoError(t, err, tc.arch)
			continue
		}
		require.Error(t, err, tc.arch)
		assert.Contains(t, err.Error(), tc.arch)
	}
	assert.EqualError(t, CheckWarpSize("gfx90a", 32), "gfx90a runs 64-wide wavefronts, but the device reports warpSize 32")
}
