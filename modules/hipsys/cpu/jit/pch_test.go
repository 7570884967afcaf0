package jit

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// After a first compile, the prelude is precompiled in the background for its flags, and
// a later compile of another kernel with the same flags loads it (GCC's -H lists a
// precompiled header it loads with a "!").
func TestPrecompiledPreludeIsUsed(t *testing.T) {
	tc, err := findToolchain(t.TempDir())
	require.NoError(t, err)
	if strings.Contains(tc.identity, "clang") {
		t.Skip("precompiled preludes are GCC's only")
	}
	t.Setenv("CUBEHIP_CACHE_DIR", t.TempDir())
	t.Setenv("CUBEHIP_CPU_CXXFLAGS", "-H -Winvalid-pch")
	c := NewCompiler(t.TempDir())
	_, log, err := c.Compile(`extern "C" __global__ void a(int* p) { p[0] = 1; }`, "a.hip", nil, nil)
	require.NoError(t, err, log)
	require.NotContains(t, log, ".gch")
	// Finished ones only: a build in progress is a ".build-*" directory.
	pattern := filepath.Join(DefaultCacheDir(), layoutVersion, "pch", "[0-9a-f]*", "cubehip_prelude.h.gch")
	pch, _ := filepath.Glob(pattern)
	for deadline := time.Now().Add(2 * time.Minute); len(pch) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		pch, _ = filepath.Glob(pattern)
	}
	require.Len(t, pch, 1, "the precompiled prelude was not built")

	img, log, err := c.Compile(`extern "C" __global__ void b(int* p) { p[0] = 2; }`, "b.hip", nil, nil)
	require.NoError(t, err, log)
	require.Contains(t, log, "! "+pch[0], "the second compile did not load the precompiled prelude")
	require.NotContains(t, log, "invalid")
	m, err := Load(img)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Function("b")
	require.NoError(t, err)

	// Turned off, the compile reads the prelude itself.
	t.Setenv("CUBEHIP_CPU_PCH", "0")
	_, log, err = NewCompiler(t.TempDir()).Compile(`extern "C" __global__ void c(int* p) { p[0] = 3; }`, "c.hip", nil, nil)
	require.NoError(t, err, log)
	require.NotContains(t, log, ".gch")
}
