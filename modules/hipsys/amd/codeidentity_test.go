package amd

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// ownLibrary is a library of its own over the installed ROCm (not the one loadDefault
// shares), so that a test may change what it says about itself; skipped without ROCm.
func ownLibrary(t *testing.T) *library {
	t.Helper()
	shared, err := loadDefault()
	if errors.Is(err, dl.ErrNotFound) && os.Getenv("CUBEHIP_REQUIRE_AMD") == "" {
		t.Skipf("no ROCm installed (%v)", err)
	}
	require.NoError(t, err)
	lib, err := load([]string{shared.hip.Name}, nil)
	require.NoError(t, err)
	if lib.rtc == nil {
		t.Skipf("no hiprtc: %v", lib.rtcErr)
	}
	return lib
}

// Each input of a hiprtc compile other than the program changes the identity: a cache
// keyed on it never hands out code another hiprtc, architecture or option list built.
func TestCodeIdentityCoversWhatDecidesTheCode(t *testing.T) {
	lib := ownLibrary(t)
	assert.GreaterOrEqual(t, lib.rtc.major, 0, "hiprtcVersion is read from every ROCm cubehip supports")
	assert.NotEmpty(t, lib.rtc.path, "the file hiprtc was loaded from")
	t.Logf("hiprtc %d.%d from %s", lib.rtc.major, lib.rtc.minor, lib.rtc.path)

	base, err := lib.codeIdentity("gfx90a", []string{"-DX=1"})
	require.NoError(t, err)
	again, err := lib.codeIdentity("gfx90a", []string{"-DX=1"})
	require.NoError(t, err)
	assert.Equal(t, base, again, "the same inputs, the same identity")

	differs := func(why, arch string, options ...string) {
		t.Helper()
		id, err := lib.codeIdentity(arch, options)
		require.NoError(t, err)
		assert.NotEqual(t, base, id, why)
	}
	differs("another architecture", "gfx908", "-DX=1")
	differs("other options", "gfx90a", "-DX=2")
	differs("an optimization level instead of cubehip's default", "gfx90a", "-DX=1", "-O0")

	saved := *lib.rtc
	lib.rtc.minor++
	differs("another hiprtc version", "gfx90a", "-DX=1")
	*lib.rtc = saved
	lib.version++
	differs("another ROCm patch release", "gfx90a", "-DX=1")
	lib.version--
	lib.rtc.path += ".other"
	differs("another hiprtc file", "gfx90a", "-DX=1")
	*lib.rtc = saved
}

// The platform takes the architecture from the options, as RTCCompileProgram does, and
// without hiprtc it is the error compiling would be.
func TestPlatformCodeIdentity(t *testing.T) {
	lib := ownLibrary(t)
	p := newPlatform(lib)
	id, err := p.CodeIdentity([]string{"--offload-arch=gfx90a"})
	require.NoError(t, err)
	want, err := lib.codeIdentity("", []string{"--offload-arch=gfx90a"})
	require.NoError(t, err)
	assert.Equal(t, want, id)

	noRTC := fakePlatform(t)
	_, err = noRTC.CodeIdentity([]string{"--offload-arch=gfx90a"})
	assert.ErrorIs(t, err, hipsys.ErrorNotSupported)
}
