package compute_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// logBuffer is a slog destination a test reads back: every record of level warn and up.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// warnings counts the records of level warn and up.
func (b *logBuffer) warnings() int { return strings.Count(b.String(), "level=WARN") }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// newLoggedServer is a server over a fresh fault wrapper, its kernel cache in dir ("-":
// none), its warnings in the returned buffer.
func newLoggedServer(t *testing.T, dir string) (*compute.Server, *faults.Platform, *logBuffer) {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	f := faults.Wrap(p)
	logs := &logBuffer{}
	srv, err := compute.New(f, compute.Config{CacheDir: dir, Logger: logs.logger(),
		Stream: []stream.Option{stream.WithGPUProps(smallProps)}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv, f, logs
}

// unique makes a source no earlier run compiled, so no cache answers for it.
func unique(src string) string { return fmt.Sprintf("// %d\n%s", time.Now().UnixNano(), src) }

// A kernel with no output (one that only prints, or only reads) has no buffer to carry
// its compile error: Launch returns it, and the stream's next TakeFailure (the
// Device's Sync) reports it once more, then forgets it.
func TestCompileErrorWithNoOutputIsReturned(t *testing.T) {
	srv, _, _ := newLoggedServer(t, "-")
	printer := compute.NewKernel(unique(`#include <cstdio>
extern "C" __global__ void printer() { printf("%d\n", threadIdx.x) not C++ }`), "printer", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil)
	err := srv.Launch(printer, compute.Static(1, 1, 1), &compute.Args{}, 0, compute.Execute)
	var ce *compute.CompileError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "printer", ce.Entry)
	assert.ErrorIs(t, srv.TakeFailure(0), compute.ErrCompilation)
	assert.NoError(t, srv.TakeFailure(0), "reported once")
	assert.NoError(t, srv.Sync(nil, 0).Wait())

	// A kernel that only reads its buffers writes none that could carry the error.
	reader := compute.NewKernel(unique(`extern "C" __global__ void reader(const float* in) { not C++ }`), "reader",
		hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Read})
	in, err := srv.Create(f32bytes(1), 1)
	require.NoError(t, err)
	defer in.Release()
	ib, err := in.Binding()
	require.NoError(t, err)
	defer ib.Release()
	err = srv.Launch(reader, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{ib}}, 1, compute.Execute)
	assert.ErrorIs(t, err, compute.ErrCompilation)
	assert.NoError(t, srv.TakeFailure(0), "stream 0 did not launch it")
	assert.ErrorIs(t, srv.TakeFailure(1), compute.ErrCompilation)
	_, err = srv.Read([]compute.CopyDescriptor{compute.Linear(ib, 4)}, 1).Wait()
	assert.NoError(t, err, "an input is never failed by the launch")
}

// A kernel with an output: the first launch returns the compile error, the output
// carries it, and the stream's next sync reports it once.
func TestCompileErrorWithAnOutputIsReturnedAndCarried(t *testing.T) {
	e := newColdEnv(t)
	broken := compute.NewKernel(unique(`extern "C" __global__ void broken(float* out) { not C++ }`), "broken",
		hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Write})
	out := e.empty(0, 1)
	err := e.srv.Launch(broken, compute.Static(1, 1, 1), &compute.Args{Buffers: []compute.Binding{out}}, 0, compute.Execute)
	assert.ErrorIs(t, err, compute.ErrCompilation, "the first launch reports the mistake")
	_, err = e.read(0, out, 1)
	assert.ErrorIs(t, err, compute.ErrCompilation)
	assert.ErrorIs(t, e.srv.TakeFailure(0), compute.ErrCompilation)
	assert.NoError(t, e.srv.TakeFailure(0), "reported once")
}

// An entry point the source does not define is the user's mistake, not the cache's: a
// compile error naming it, no warning, and, once its code is on disk, no compile again.
func TestMissingEntryIsACompileError(t *testing.T) {
	dir := t.TempDir()
	src := unique(kernelSource)
	missing := compute.NewKernel(src, "no_such_kernel", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil)
	for i, want := range []int{1, 0} {
		srv, f, logs := newLoggedServer(t, dir)
		for range 2 {
			err := srv.Launch(missing, compute.Static(1, 1, 1), &compute.Args{}, 0, compute.Execute)
			var ce *compute.CompileError
			require.ErrorAs(t, err, &ce, "server %d", i)
			assert.Contains(t, err.Error(), `no kernel named "no_such_kernel"`)
			assert.True(t, errors.Is(err, hipsys.ErrorNotFound), "it unwraps to the platform's hipErrorNotFound")
		}
		assert.Zero(t, logs.warnings(), "server %d: a missing entry is no cache problem:\n%s", i, logs)
		assert.Equal(t, want, f.Calls("hiprtcCompileProgram"), "server %d: the code on disk is what a compile would give", i)
		assert.ErrorIs(t, srv.TakeFailure(0), compute.ErrCompilation)
	}

	// Through Compile too, where it names the entry the same way.
	srv, _, logs := newLoggedServer(t, dir)
	_, err := srv.Compile(missing)
	assert.ErrorIs(t, err, compute.ErrCompilation)
	assert.Contains(t, err.Error(), "no_such_kernel")
	assert.Zero(t, logs.warnings())
}
