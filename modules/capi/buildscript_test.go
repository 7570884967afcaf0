package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripts/build-capi.sh as the README's C section uses it: --prefix alone installs; a
// host built from either .pc (the build tree's, the prefix's) with pkg-config and
// nothing else runs without LD_LIBRARY_PATH (the .pc carries an rpath); and a second
// run with nothing changed does not relink the library.
func TestBuildScriptPkgConfigHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds libcubehip.so: not in -short")
	}
	if _, err := exec.LookPath("pkg-config"); err != nil {
		t.Fatalf("pkg-config is not installed (scripts/deps.sh installs pkgconf): %v", err)
	}
	top := root(t)
	script := filepath.Join(top, "scripts", "build-capi.sh")
	prefix := t.TempDir()
	out, err := exec.Command(script, "--prefix", prefix).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.FileExists(t, filepath.Join(prefix, "lib", "pkgconfig", "cubehip.pc"), "--prefix alone did not install")

	lib, err := filepath.EvalSymlinks(filepath.Join(top, "build", "lib", "libcubehip.so"))
	require.NoError(t, err)
	before, err := os.Stat(lib)
	require.NoError(t, err)
	out, err = exec.Command(script).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "not rebuilt")
	after, err := os.Stat(lib)
	require.NoError(t, err)
	assert.Equal(t, before.ModTime(), after.ModTime(), "the library was relinked with nothing changed")

	for _, pcDir := range []string{filepath.Join(top, "build", "lib", "pkgconfig"), filepath.Join(prefix, "lib", "pkgconfig")} {
		env := append(os.Environ(), "PKG_CONFIG_PATH="+pcDir)
		pc := exec.Command("pkg-config", "--cflags", "--libs", "cubehip")
		pc.Env = env
		flags, err := pc.Output()
		require.NoError(t, err, pcDir)
		bin := filepath.Join(t.TempDir(), "saxpy")
		args := append([]string{"examples/c/saxpy.c", "-o", bin}, strings.Fields(string(flags))...)
		out, err := exec.Command(cc(), args...).CombinedOutput()
		require.NoError(t, err, "cc %s:\n%s", strings.Join(args, " "), out)
		t.Setenv("LD_LIBRARY_PATH", "")
		assert.Contains(t, runHost(t, bin), "saxpy over 1048576 elements: ok", pcDir)
	}
}
