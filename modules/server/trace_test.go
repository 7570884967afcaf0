package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

type chromeTrace struct {
	TraceEvents []struct {
		Name string            `json:"name"`
		Cat  string            `json:"cat"`
		Ph   string            `json:"ph"`
		Ts   float64           `json:"ts"`
		Dur  float64           `json:"dur"`
		Pid  int               `json:"pid"`
		Tid  int64             `json:"tid"`
		Args map[string]string `json:"args"`
	} `json:"traceEvents"`
}

// traceSlices is the trace's complete events as "cat name@stream", in order, after checking
// each one's times.
func traceSlices(t *testing.T, data []byte) []string {
	t.Helper()
	var tr chromeTrace
	require.NoError(t, json.Unmarshal(data, &tr), "%s", data)
	var out []string
	last := map[int64]float64{}
	threads := map[int64]bool{}
	for _, e := range tr.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				threads[e.Tid] = true
				if e.Tid == -1 {
					assert.Equal(t, "compiles (host clock)", e.Args["name"])
				} else {
					assert.Equal(t, "stream "+itoa(e.Tid), e.Args["name"])
				}
			}
		case "X":
			assert.GreaterOrEqual(t, e.Ts, 0.0, e.Name)
			assert.GreaterOrEqual(t, e.Dur, 0.0, e.Name)
			assert.GreaterOrEqual(t, e.Ts, last[e.Tid], "%s starts after what its stream ran before it", e.Name)
			last[e.Tid] = e.Ts + e.Dur
			assert.True(t, threads[e.Tid], "stream %d is named", e.Tid)
			out = append(out, e.Cat+" "+e.Name+"@"+itoa(e.Tid))
		default:
			t.Errorf("unexpected phase %q", e.Ph)
		}
	}
	return out
}

func itoa(v int64) string { return jsonNum(v) }

func jsonNum(v int64) string { b, _ := json.Marshal(v); return string(b) }

// A trace holds one slice per launch (named by its kernel), copy and replay, each on its
// stream's row, in the order the stream ran them.
func TestTraceRecordsEveryOperation(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	require.NoError(t, d.Compile(devScale))
	require.NoError(t, d.StartTrace())
	assert.ErrorIs(t, d.StartTrace(), server.ErrInvalidArgument, "one trace at a time")
	x, err := server.UploadSlice(d.Stream, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	y := alloc(t, d.Stream, 16)
	require.NoError(t, d.Call(devScale, grid(4), x.Arg(), y.Arg(), server.F32(2), server.U32(4)))
	_, err = server.ReadSlice[float32](d.Stream, y)
	require.NoError(t, err)
	s1 := d.On(1)
	g, err := s1.Capture(func(c server.Stream) error {
		return c.Call(devInc, grid(4), y.Arg(), server.U32(4))
	})
	require.NoError(t, err)
	require.NoError(t, g.Replay())
	require.NoError(t, g.Replay())
	require.Error(t, d.Call(devScale, grid(4), x.Arg()), "a refused launch is not traced")
	var buf bytes.Buffer
	require.NoError(t, d.StopTrace(&buf))
	require.NoError(t, g.Destroy())
	assert.Equal(t, []string{
		"copy write 16 B@0", "launch dev_scale@0", "copy read 16 B@0",
		"launch dev_inc@1", // Capture's warm-up run, which runs for real before it records
		"replay replay graph " + jsonNum(int64(g.ID())) + "@1", "replay replay graph " + jsonNum(int64(g.ID())) + "@1",
		// No compile: dev_inc is of dev_scale's module, compiled before the trace.
	}, traceSlices(t, buf.Bytes()))
	assert.ErrorIs(t, d.StopTrace(&buf), server.ErrInvalidArgument, "no trace open")
	// Untraced again: nothing more is recorded.
	require.NoError(t, d.Call(devScale, grid(4), x.Arg(), y.Arg(), server.F32(2), server.U32(4)))
	require.NoError(t, d.Sync())
}

// CUBEHIP_TRACE traces a program that never asked: the file is written at Close.
func TestTraceFromTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(server.EnvTrace, path)
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	x, err := server.UploadSlice(d.Stream, []float32{1, 2})
	require.NoError(t, err)
	require.NoError(t, d.Call(devInc, grid(2), x.Arg(), server.U32(2)))
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"copy write 8 B@0", "launch dev_inc@0", "compile dev_inc@-1"}, traceSlices(t, data))
}

// traceCompiles is the trace's compile slices: entry, then its args.
func traceCompiles(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	var tr chromeTrace
	require.NoError(t, json.Unmarshal(data, &tr), "%s", data)
	var out []map[string]string
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Cat == "compile" {
			assert.Equal(t, int64(-1), e.Tid, "a compile is on the compiles row")
			assert.Greater(t, e.Dur, 0.0, "a compile takes time")
			m := map[string]string{"entry": e.Name}
			for k, v := range e.Args {
				m[k] = v
			}
			out = append(out, m)
		}
	}
	return out
}

// A trace lists every module compiled while it is open, named by the kernel whose call
// compiled it (Compile, a first launch), whether the compiler ran or the disk cache
// served it, and a compile that failed, with its error. A kernel of a module already
// loaded compiles nothing.
func TestTraceListsCompiles(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	d, err := server.Open(server.Options{CacheDir: dir, Logger: quiet})
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.Close()) }()
	require.NoError(t, d.StartTrace())
	scale := server.NewKernel(devSource, "dev_scale", devBlock, []server.Access{server.Read, server.Write})
	require.NoError(t, d.Compile(scale))
	require.NoError(t, d.Compile(scale), "compiled already: no second compile")
	inc := server.NewKernel(devSource, "dev_inc", devBlock, []server.Access{server.ReadWrite})
	x, err := server.UploadSlice(d.Stream, []float32{1, 2})
	require.NoError(t, err)
	require.NoError(t, d.Call(inc, grid(2), x.Arg(), server.U32(2)), "dev_scale's module: nothing to compile")
	other := server.NewKernel(devSource+"\n// another module\n", "dev_inc", devBlock, []server.Access{server.ReadWrite})
	require.NoError(t, d.Call(other, grid(2), x.Arg(), server.U32(2)))
	broken := server.DefineKernel("extern \"C\" __global__ void broken(float* x) { x[0] = missing; }", "broken")
	var ce *server.CompileError
	require.ErrorAs(t, d.Compile(broken), &ce)
	var buf bytes.Buffer
	require.NoError(t, d.StopTrace(&buf))
	got := traceCompiles(t, buf.Bytes())
	require.Len(t, got, 3, "%s", buf.Bytes())
	assert.Equal(t, map[string]string{"entry": "dev_scale", "source": "compiler"}, got[0])
	assert.Equal(t, map[string]string{"entry": "dev_inc", "source": "compiler"}, got[1])
	assert.Equal(t, "broken", got[2]["entry"])
	assert.Contains(t, got[2]["error"], "missing", "the compile's error is in the trace")

	// A second device over the same disk cache loads the code the first compiled.
	d2, err := server.Open(server.Options{CacheDir: dir, Logger: quiet})
	require.NoError(t, err)
	defer func() { assert.NoError(t, d2.Close()) }()
	require.NoError(t, d2.StartTrace())
	require.NoError(t, d2.Compile(scale))
	buf.Reset()
	require.NoError(t, d2.StopTrace(&buf))
	assert.Equal(t, []map[string]string{{"entry": "dev_scale", "source": "disk cache"}}, traceCompiles(t, buf.Bytes()))

	// No trace open: nothing is observed (the next trace starts empty).
	require.NoError(t, d2.Compile(other))
	require.NoError(t, d2.StartTrace())
	buf.Reset()
	require.NoError(t, d2.StopTrace(&buf))
	assert.Empty(t, traceCompiles(t, buf.Bytes()))
}

// FlushTrace writes the $CUBEHIP_TRACE trace now, for a program that never closes its
// device, and keeps tracing: the next write holds everything since the start.
func TestFlushTraceWritesTheEnvironmentTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(server.EnvTrace, path)
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	x, err := server.UploadSlice(d.Stream, []float32{1, 2})
	require.NoError(t, err)
	require.NoError(t, d.Call(devInc, grid(2), x.Arg(), server.U32(2)))
	require.NoError(t, d.FlushTrace())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"copy write 8 B@0", "launch dev_inc@0", "compile dev_inc@-1"}, traceSlices(t, data))

	require.NoError(t, d.Call(devInc, grid(2), x.Arg(), server.U32(2)))
	require.NoError(t, d.FlushTrace())
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"copy write 8 B@0", "launch dev_inc@0", "launch dev_inc@0", "compile dev_inc@-1"}, traceSlices(t, data))
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left beside the trace")

	require.NoError(t, d.Close(), "Close writes it once more")
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, traceSlices(t, data), 4)
	assert.ErrorIs(t, d.FlushTrace(), server.ErrClosed)
}

// Without $CUBEHIP_TRACE, or once StopTrace ended the trace, FlushTrace does nothing: a
// program may call it unconditionally before it exits.
func TestFlushTraceWithoutAFile(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	require.NoError(t, d.FlushTrace(), "no trace open")
	require.NoError(t, d.StartTrace())
	require.NoError(t, d.FlushTrace(), "a trace StopTrace will write has no file")
	require.NoError(t, d.StopTrace(io.Discard))

	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json")
	t.Setenv(server.EnvTrace, path)
	d2, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, d2.StopTrace(&buf), "StopTrace takes the environment's trace")
	require.NoError(t, d2.FlushTrace(), "ended: nothing to write")
	require.NoError(t, d2.Close())
	assert.NoFileExists(t, path)

	// A file that cannot be made is an error naming it, and the trace goes on.
	t.Setenv(server.EnvTrace, filepath.Join(dir, "no-such-dir", "trace.json"))
	d3, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	err = d3.FlushTrace()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no-such-dir")
	assert.Error(t, d3.Close(), "Close cannot write it either")
}

// Flushes racing launches and StopTrace neither read a mark StopTrace gave back nor
// lose a span: the race detector and the final trace say so.
func TestFlushTraceConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	t.Setenv(server.EnvTrace, path)
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.Close()) }()
	x, err := server.UploadSlice(d.Stream, []float32{1, 2})
	require.NoError(t, err)
	done := make(chan error)
	go func() {
		var err error
		for range 20 {
			err = errors.Join(err, d.FlushTrace())
		}
		done <- err
	}()
	for range 50 {
		require.NoError(t, d.Call(devInc, grid(2), x.Arg(), server.U32(2)))
	}
	var buf bytes.Buffer
	require.NoError(t, d.StopTrace(&buf))
	require.NoError(t, <-done)
	launches := 0
	for _, s := range traceSlices(t, buf.Bytes()) {
		if s == "launch dev_inc@0" {
			launches++
		}
	}
	assert.Equal(t, 50, launches)
}
