package diskcap

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

// cpuDir is where the cpu device's jit keeps its objects under the cache directory.
const cpuDir = "cpu-v1"

// Over the cap, the least recently used units go first, down to 90% of it; a
// precompiled prelude's directory goes as one unit; the include directories, the
// compiler memo and entries used within the last minute stay whatever the cap; stale
// scratch goes whatever the size.
func TestTrimCacheEvictsLeastRecentlyUsed(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old := now.Add(-3 * time.Hour)
	oldest := put(t, root, "kernels/a.co", 100, old)
	pch := filepath.Join(root, cpuDir, "pch", "p1")
	put(t, pch, "cubehip_base.h", 10, old.Add(time.Minute))
	put(t, pch, "cubehip_base.h.gch", 300, old.Add(2*time.Minute)) // the unit's newest
	middle := put(t, root, cpuDir+"/obj/ab/x.img", 100, old.Add(time.Hour))
	recent := put(t, root, cpuDir+"/so/y.so", 100, now.Add(-time.Second))
	inc := put(t, root, cpuDir+"/include-0123/cubehip_prelude.h", 100, old)
	memo := put(t, root, cpuDir+"/compilers/c", 10, old)
	stale := put(t, root, cpuDir+"/.build-123/x", 10, old)
	require.NoError(t, os.Chtimes(filepath.Dir(stale), old, old))
	live := put(t, root, cpuDir+"/.build-456/x", 10, old)
	// A scratch directory made just now and not yet written to is in use.
	fresh := filepath.Join(root, cpuDir, ".build-789")
	require.NoError(t, os.Mkdir(fresh, 0o700))

	left, removed := Trim(root, 250, now)
	assert.NoFileExists(t, oldest)
	assert.NoDirExists(t, pch)
	assert.FileExists(t, middle, "225 bytes (90% of 250) are reached before it")
	assert.FileExists(t, recent)
	assert.FileExists(t, inc)
	assert.FileExists(t, memo)
	assert.NoDirExists(t, filepath.Dir(stale))
	assert.FileExists(t, live, "its directory was written to just now")
	assert.DirExists(t, fresh)
	assert.Equal(t, 3, removed, "a.co, the pch directory, the stale scratch")
	assert.Equal(t, int64(200), left, "the units left: the .img and the .so")

	// Under the cap nothing goes.
	left, removed = Trim(root, 1<<20, now)
	assert.Equal(t, 0, removed)
	assert.Equal(t, int64(200), left)

	// A unit used in the last minute stays even over the cap.
	_, removed = Trim(root, 1, now)
	assert.Equal(t, 1, removed)
	assert.FileExists(t, recent)
}

func TestCacheMaxBytes(t *testing.T) {
	for v, want := range map[string]int64{"": 1 << 30, "0": 0, "12345": 12345, "512M": 512 << 20, "2g": 2 << 30, "4K": 4096, "ten": 1 << 30, "-1": 1 << 30, "1.5G": 1 << 30} {
		t.Setenv(EnvMaxBytes, v)
		assert.Equal(t, want, MaxBytes(), "%q", v)
	}
}
