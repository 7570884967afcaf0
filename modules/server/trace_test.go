package server_test

import (
	"bytes"
	"encoding/json"
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
				assert.Equal(t, "stream "+itoa(e.Tid), e.Args["name"])
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
	assert.Equal(t, []string{"copy write 8 B@0", "launch dev_inc@0"}, traceSlices(t, data))
}
