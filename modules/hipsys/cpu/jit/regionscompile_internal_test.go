package jit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// RequireRegionsCompile checks that src's rewrite into regions compiles as it is, at
// WarpSize lanes: a rewrite that does not runs as fibers, with the same answers, so a
// test that compares answers alone would not see it.
func RequireRegionsCompile(t *testing.T, src string) {
	p := scan(src)
	require.True(t, p.regions(), "no entry of the source runs as regions")
	root := t.TempDir()
	tc, err := findToolchain(root)
	require.NoError(t, err)
	inc, err := includeDir(root)
	require.NoError(t, err)
	file := filepath.Join(root, "k.cpp")
	require.NoError(t, os.WriteFile(file, []byte(p.rewritten+p.tail()), 0o600))
	args := append(append([]string{}, tc.argv[1:]...), baseFlags("-O0")...)
	args = append(args, "-fsyntax-only", "-DCUBEHIP_WARP_SIZE="+strconv.Itoa(WarpSize),
		"-DCUBEHIP_TLS_BUILTINS="+boolFlag(p.tlsBuiltins), "-DCUBEHIP_WARPS="+boolFlag(p.warps),
		"-I", inc, "-include", filepath.Join(inc, "cubehip_prelude.h"), file)
	out, err := exec.Command(tc.argv[0], args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
}
