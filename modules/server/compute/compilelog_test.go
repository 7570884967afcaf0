package compute

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// launchFresh compiles (dry run) a kernel no earlier run built, on a server caching in
// dir and logging at debug level into the returned buffer.
func launchFresh(t *testing.T, dir, src string) *syncBuffer {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	logs := &syncBuffer{}
	srv, err := New(p, Config{CacheDir: dir, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Stream: []stream.Option{stream.WithGPUProps(memory.DeviceProps{MemoryTotal: 256 << 20, Alignment: 256})}})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()
	k := NewKernel(src, "k", hipsys.Dim3{X: 1}, []Access{Write})
	require.NoError(t, srv.Launch(k, Static(1, 1, 1), &Args{Buffers: make([]Binding, 1)}, 0, DryRun))
	return logs
}

// A slow compile logs one info line naming the kernel, the platform and the time; the
// disk cache's miss, then a later server's hit, are logged at debug level.
func TestCompileLogsSlowCompileAndDiskCacheUse(t *testing.T) {
	defer func(d time.Duration) { slowCompile = d }(slowCompile)
	slowCompile = 0 // every compile is slow
	dir := t.TempDir()
	src := fmt.Sprintf("// %d\nextern \"C\" __global__ void k(float* p) { p[0] = 1; }", time.Now().UnixNano())

	logs := launchFresh(t, dir, src).String()
	assert.Equal(t, 1, strings.Count(logs, "msg=\"server: compiled kernel\""), logs)
	assert.Contains(t, logs, "kernel=k platform=cpu took=")
	assert.Contains(t, logs, "level=DEBUG msg=\"server: kernel disk cache miss\" kernel=k platform=cpu")

	logs = launchFresh(t, dir, src).String()
	assert.Contains(t, logs, "level=DEBUG msg=\"server: kernel disk cache hit\" kernel=k platform=cpu")
	assert.NotContains(t, logs, "compiled kernel", "a hit compiles nothing")
}

// A hit marks its entry used; a write over the cap evicts the least recently used.
func TestDiskCacheKeepsUnderItsCap(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvCacheMaxBytes, "1M")
	old := filepath.Join(dir, "kernels", "old.co")
	require.NoError(t, os.MkdirAll(filepath.Dir(old), 0o700))
	require.NoError(t, os.WriteFile(old, make([]byte, 1<<20), 0o600))
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(old, past, past))

	src := fmt.Sprintf("// %d\nextern \"C\" __global__ void k(float* p) { p[0] = 2; }", time.Now().UnixNano())
	launchFresh(t, dir, src)
	assert.NoFileExists(t, old, "the write over the cap did not evict")
	entries, _ := filepath.Glob(filepath.Join(dir, "kernels", "*.co"))
	require.Len(t, entries, 1)

	require.NoError(t, os.Chtimes(entries[0], past, past))
	launchFresh(t, dir, src)
	st, err := os.Stat(entries[0])
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), st.ModTime(), time.Minute, "a hit did not mark its entry used")
}
