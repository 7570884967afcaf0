package amd

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

func TestLoadMissingLibraryNamesIt(t *testing.T) {
	_, err := load([]string{"libcubehip-no-such-amdhip64.so.9", "libcubehip-no-such-amdhip64.so"}, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, dl.ErrNotFound)
	assert.Contains(t, err.Error(), "amd: cannot load libcubehip-no-such-amdhip64.so.9")
	assert.Contains(t, err.Error(), "libcubehip-no-such-amdhip64.so)")
}

func TestOpenHonoursEnvLibrary(t *testing.T) {
	t.Setenv(EnvLibrary, "/nonexistent/rocm/lib/libamdhip64.so.6")
	_, err := Open()
	require.Error(t, err)
	assert.ErrorIs(t, err, dl.ErrNotFound)
	assert.Contains(t, err.Error(), "/nonexistent/rocm/lib/libamdhip64.so.6")
}

func TestLoadLibraryWithoutHIPNamesEveryMissingSymbol(t *testing.T) {
	_, err := load([]string{"libc.so.6"}, nil)
	require.Error(t, err)
	var se *dl.SymbolError
	require.True(t, errors.As(err, &se))
	for _, want := range []string{
		"libc.so.6 is not a usable HIP runtime",
		"hipGetDeviceCount", "hipModuleLaunchKernel", "hipStreamBeginCapture",
		"hipGetDevicePropertiesR0600 or hipGetDeviceProperties",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestLoadLibraryMissingOneSymbolNamesOnlyIt(t *testing.T) {
	_, err := load([]string{fakeLibrary(t, "-DOMIT_GRAPH_LAUNCH")}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no symbol hipGraphLaunch")
	assert.NotContains(t, err.Error(), "hipGraphDestroy")
}

func TestLoadRejectsOldRuntime(t *testing.T) {
	path := fakeLibrary(t)
	tests := []struct {
		version string
		ok      bool
	}{
		{"40200000", false},
		{"50120000", false},
		{"50200000", true},
		{"70100000", true},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			t.Setenv("FAKE_HIP_VERSION", tc.version)
			lib, err := load([]string{path}, nil)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, tc.version, strconv.Itoa(lib.version))
				return
			}
			var ve *VersionError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Contains(t, err.Error(), "needs ROCm 5.2 or newer")
			assert.Contains(t, err.Error(), "("+tc.version+")")
		})
	}
}

func TestMissingHIPRTCIsNotSupportedNamingIt(t *testing.T) {
	p := fakePlatform(t)
	_, err := p.RTCCreateProgram("extern \"C\" __global__ void k() {}", "k.hip", nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, hipsys.ErrorNotSupported)
	assert.Contains(t, err.Error(), "hiprtcCreateProgram")
	assert.Contains(t, err.Error(), "libcubehip-no-such-hiprtc.so")
	assert.Contains(t, err.Error(), "has no symbol hiprtcCreateProgram")
}

func TestVersionString(t *testing.T) {
	assert.Equal(t, "5.2.21153", versionString(50221153))
	assert.Equal(t, "6.1.40091", versionString(60140091))
	assert.Equal(t, "7.0.0", versionString(70000000))
}
