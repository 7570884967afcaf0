package jit

import (
	"os"
	"os/exec"
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
	pattern := filepath.Join(DefaultCacheDir(), layoutVersion, "pch", "[0-9a-f]*", pchHeader+".gch")
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

// One precompiled prelude serves every mode of the jit: after a plain kernel's compile
// built it, a kernel using warps and one whose __device__ function reads threadIdx (the
// other two modes) load the same header, and no second one is built.
func TestPrecompiledPreludeServesEveryMode(t *testing.T) {
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
	pattern := filepath.Join(DefaultCacheDir(), layoutVersion, "pch", "[0-9a-f]*", pchHeader+".gch")
	pch, _ := filepath.Glob(pattern)
	for deadline := time.Now().Add(2 * time.Minute); len(pch) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		pch, _ = filepath.Glob(pattern)
	}
	require.Len(t, pch, 1, "the precompiled prelude was not built")

	for name, src := range map[string]string{
		"warps.hip": `extern "C" __global__ void w(int* p) { p[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0); }`,
		"tls.hip":   `__device__ int tid() { return threadIdx.x; } extern "C" __global__ void s(int* p) { p[0] = tid(); }`,
	} {
		_, log, err := c.Compile(src, name, nil, nil)
		require.NoError(t, err, log)
		require.Contains(t, log, "! "+pch[0], "%s did not load the precompiled prelude", name)
		require.NotContains(t, log, "invalid", name)
	}
	time.Sleep(200 * time.Millisecond) // a second build, were one started, would show in pch/
	dirs, _ := filepath.Glob(filepath.Join(DefaultCacheDir(), layoutVersion, "pch", "*"))
	require.Len(t, dirs, 1, "a precompiled prelude per mode: %v", dirs)
}

// A program that exits while its precompiled prelude is being built still leaves the
// finished header in place, and no scratch directory: the next run uses it instead of
// building another.
func TestPrecompiledPreludeOutlivesItsProcess(t *testing.T) {
	if os.Getenv("CUBEHIP_TEST_PCH_EXIT") == "1" {
		tc, err := findToolchain(workDir(DefaultCacheDir()))
		require.NoError(t, err)
		inc, err := includeDir(workDir(DefaultCacheDir()))
		require.NoError(t, err)
		pchStarted = func() { os.Exit(0) } // the compiler runs: exit under it
		preludeDir(tc, inc, []string{"-O3"})
		time.Sleep(2 * time.Minute)
		t.Fatal("the build never started")
	}
	tc, err := findToolchain(t.TempDir())
	require.NoError(t, err)
	if strings.Contains(tc.identity, "clang") {
		t.Skip("precompiled preludes are GCC's only")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPrecompiledPreludeOutlivesItsProcess$")
	cmd.Env = append(os.Environ(), "CUBEHIP_CACHE_DIR="+dir, "CUBEHIP_TEST_PCH_EXIT=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	pch := filepath.Join(dir, layoutVersion, "pch")
	var built []string
	for deadline := time.Now().Add(2 * time.Minute); len(built) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		built, _ = filepath.Glob(filepath.Join(pch, "[0-9a-f]*", pchHeader+".gch"))
	}
	require.Len(t, built, 1, "the build was lost with its process")
	scratch, _ := filepath.Glob(filepath.Join(pch, ".build-*"))
	require.Empty(t, scratch)
}
