package jit_test

import (
	"os"
	"os/exec"
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
	cold := childCompile(t, dir)
	// The second process must take the object from disk without running the compiler:
	// its Compile is far quicker than any compiler run, and it adds no object.
	objects := func() int {
		n := 0
		entries, _ := os.ReadDir(dir + "/cpu-v1/obj")
		for _, e := range entries {
			sub, _ := os.ReadDir(dir + "/cpu-v1/obj/" + e.Name())
			n += len(sub)
		}
		return n
	}
	require.Equal(t, 1, objects())
	warm := childCompile(t, dir)
	t.Logf("compile in a new process: cold %v, warm %v", cold, warm)
	assert.Less(t, warm, 5*time.Millisecond, "a warm compile in a new process must not run the compiler")
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
