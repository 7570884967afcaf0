package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runTraceHost runs a trace test host with args and extra environment, on the platform
// runHost would pick.
func runTraceHost(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	platform := os.Getenv("CUBEHIP_PLATFORM")
	if platform == "" || platform == "auto" {
		platform = "cpu"
	}
	cmd.Env = append(append(os.Environ(), "CUBEHIP_PLATFORM="+platform), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:\n%s", bin, out)
	return string(out)
}

// TestTraceC runs the C test of cubehip_trace_start, _stop and _flush: a trace holds the
// launch, copies and compile, a stop's errors leave the trace open, and every handle
// error is refused.
func TestTraceC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/trace_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	dir := t.TempDir()
	out := runTraceHost(t, bin, []string{"CUBEHIP_TRACE="}, dir)
	require.Contains(t, out, "checks passed")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the trace alone: no temporary file left beside it")
}

// A host that exits without closing its device writes $CUBEHIP_TRACE's trace with
// cubehip_trace_flush: the file exists after the process ended and lists its launch and
// compile.
func TestTraceFlushAtExitC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/trace_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	dir := t.TempDir()
	path := filepath.Join(dir, "exit.json")
	out := runTraceHost(t, bin, []string{"CUBEHIP_TRACE=" + path}, dir, "exit")
	require.Contains(t, out, "checks passed")
	data, err := os.ReadFile(path)
	require.NoError(t, err, "the trace of a host that never closed its device")
	var tr struct {
		TraceEvents []struct {
			Name, Cat, Ph string
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &tr), "%s", data)
	var got []string
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" {
			got = append(got, e.Cat+" "+e.Name)
		}
	}
	assert.Equal(t, []string{"copy write 400 B", "launch traced_inc", "copy read 400 B", "compile traced_inc"}, got)
}

// TestTraceCPP runs the trace calls through cubehip.hpp's device methods.
func TestTraceCPP(t *testing.T) {
	bin := compileHost(t, cxx(), "tests/trace_test.cpp", "-std=c++17", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runTraceHost(t, bin, []string{"CUBEHIP_TRACE="}, t.TempDir())
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
