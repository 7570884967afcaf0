package amd

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeLibrary builds testdata/fakehip.c (a stand-in libamdhip64 backed by malloc) with
// the given -D flags and returns its path. It needs a C compiler, which any cgo build has.
func fakeLibrary(t *testing.T, defines ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake libamdhip64:", err)
	}
	out := filepath.Join(t.TempDir(), "libamdhip64.so.5")
	args := append([]string{"-shared", "-fPIC", "-o", out, "testdata/fakehip.c"}, defines...)
	b, err := exec.Command(cc, args...).CombinedOutput()
	require.NoError(t, err, "building the fake library: %s", b)
	return out
}

// fakePlatform opens a Platform over a fake library; its hiprtc is absent on purpose.
func fakePlatform(t *testing.T, defines ...string) *Platform {
	t.Helper()
	lib, err := load([]string{fakeLibrary(t, defines...)}, []string{"libcubehip-no-such-hiprtc.so"})
	require.NoError(t, err)
	return newPlatform(lib)
}
