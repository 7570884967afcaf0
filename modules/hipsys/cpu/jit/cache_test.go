package jit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

const childEnv = "CUBEHIP_JIT_TEST_CHILD"

// TestChildCompile is the body run in a fresh process by the tests and benchmark below:
// it compiles basicSource once under the inherited cache dir and prints how long that
// took. In a normal run it is skipped.
func TestChildCompile(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as the child of TestDiskCacheHitInNewProcess")
	}
	start := time.Now()
	img, log, err := jit.NewCompiler(os.Getenv("CUBEHIP_CACHE_DIR")).Compile(basicSource, "test.hip", nil, nil)
	took := time.Since(start)
	require.NoError(t, err, log)
	m, err := jit.Load(img)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	os.Stdout.WriteString("compile-ns=" + strconv.FormatInt(took.Nanoseconds(), 10) + "\n")
}

// childCompile re-runs this test binary as a new process (no in-memory state, no
// compiler identity, nothing loaded) and returns the time its Compile took.
func childCompile(t testing.TB, cacheDir string, env ...string) time.Duration {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildCompile$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "CUBEHIP_CACHE_DIR="+cacheDir)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "compile-ns="); ok {
			ns, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			require.NoError(t, err)
			return time.Duration(ns)
		}
	}
	t.Fatalf("child printed no timing:\n%s", out)
	return 0
}

func TestDiskCacheHitInNewProcess(t *testing.T) {
	dir := t.TempDir()
	// The compiler is a wrapper that logs each run: the second process must take the
	// object (and the compiler's identity) from disk without running it at all. Its
	// time is logged, not asserted: BenchmarkWarmCompileNewProcess holds the budget, and a
	// loaded machine stretches a few milliseconds of file reads.
	cxx := os.Getenv("CXX")
	if strings.TrimSpace(cxx) == "" {
		cxx = "c++"
	}
	runs := filepath.Join(dir, "runs.log")
	wrapper := filepath.Join(dir, "cxx")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho run >>'"+runs+"'\nexec "+cxx+" \"$@\"\n"), 0o755))
	compilerRuns := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}
	objects := func() int {
		n := 0
		entries, _ := os.ReadDir(dir + "/cpu-v1/obj")
		for _, e := range entries {
			sub, _ := os.ReadDir(dir + "/cpu-v1/obj/" + e.Name())
			n += len(sub)
		}
		return n
	}
	cold := childCompile(t, dir, "CXX="+wrapper)
	require.Equal(t, 1, objects())
	coldRuns := compilerRuns()
	require.Positive(t, coldRuns, "the cold compile ran no compiler: the wrapper is not in use")
	warm := childCompile(t, dir, "CXX="+wrapper)
	t.Logf("compile in a new process: cold %v (%d compiler runs), warm %v", cold, coldRuns, warm)
	assert.Equal(t, coldRuns, compilerRuns(), "a warm compile in a new process must not run the compiler")
	assert.Equal(t, 1, objects())
}

// The on-disk cache must be keyed by the source: another source misses.
func TestDiskCacheKeyedBySourceAndOptions(t *testing.T) {
	dir := t.TempDir()
	c := jit.NewCompiler(dir)
	const src = `extern "C" __global__ void k(int* p) { p[0] = VALUE; }`
	a, _, err := c.Compile(src, "k.hip", nil, []string{"-DVALUE=1"})
	require.NoError(t, err)
	b, _, err := c.Compile(src, "k.hip", nil, []string{"-DVALUE=2"})
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	again, _, err := jit.NewCompiler(dir).Compile(src, "k.hip", nil, []string{"-DVALUE=1"})
	require.NoError(t, err)
	assert.Equal(t, a, again)
}

// BenchmarkWarmCompileNewProcess measures Compile of a disk-cached program in a fresh
// process (budget: under 5 ms); the process start itself is not counted.
func BenchmarkWarmCompileNewProcess(b *testing.B) {
	dir := b.TempDir()
	childCompile(b, dir) // fills the cache
	var total time.Duration
	for b.Loop() {
		total += childCompile(b, dir)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/compile")
}
