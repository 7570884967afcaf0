package jit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// put writes size bytes at root/rel with mtime at.
func put(t *testing.T, root, rel string, size int, at time.Time) string {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, make([]byte, size), 0o600))
	require.NoError(t, os.Chtimes(p, at, at))
	return p
}

// A compile whose object takes the cache over the cap evicts the least recently used
// entry, checked at the first write of the process; a disk hit makes its entry recent.
func TestCompileKeepsTheCacheUnderItsCap(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUBEHIP_CACHE_DIR", dir)
	t.Setenv("CUBEHIP_CPU_PCH", "0")
	t.Setenv(EnvCacheMaxBytes, "1M")
	victim := put(t, dir, "kernels/old.co", 1<<20, time.Now().Add(-time.Hour))

	c := NewCompiler(dir)
	_, log, err := c.Compile(`extern "C" __global__ void a(int* p) { p[0] = 1; }`, "a.hip", nil, nil)
	require.NoError(t, err, log)
	assert.NoFileExists(t, victim, "the write over the cap did not evict")
	objs, _ := filepath.Glob(filepath.Join(dir, layoutVersion, "obj", "*", "*.img"))
	require.Len(t, objs, 1)

	// A hit from disk (a new compiler: nothing in memory) touches the object.
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(objs[0], past, past))
	_, log, err = NewCompiler(dir).Compile(`extern "C" __global__ void a(int* p) { p[0] = 1; }`, "a.hip", nil, nil)
	require.NoError(t, err, log)
	st, err := os.Stat(objs[0])
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), st.ModTime(), time.Minute, "a hit did not mark its entry used")
}
