package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThreadsHost runs the many-thread C host of bench/threads (docs/benchmarks.md has
// its figures at 96 threads): threads with a stream id each serve requests with two
// small buffers. What the pools reserve at the peak stays within a small page per
// thread, and once the threads are done and quiet the pools give everything back.
func TestThreadsHost(t *testing.T) {
	const threads = 32
	bin := compileHost(t, cc(), "bench/threads/threads.c", "-std=c11", "-O2")
	// 32 threads, 5 requests each of 2 × 128 KiB, 1 ms apart; usage read 2.5 s after.
	out := runHostWith(t, bin, "32", "5", "131072", "1000", "2500")
	t.Log(strings.TrimSpace(out))
	mib := func(re string) float64 {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		require.NotNil(t, m, "%s not in:\n%s", re, out)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	peak := mib(`peak reserved ([0-9.]+) MiB`)
	idle := mib(`MiB at once, ([0-9.]+) MiB after`)
	require.LessOrEqual(t, peak, float64(threads*2), "more than a 2 MiB page a thread at the peak")
	require.Zero(t, idle, "pages kept after the threads went quiet")
}

// runHostWith is runHost with arguments.
func runHostWith(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	platform := os.Getenv("CUBEHIP_PLATFORM")
	if platform == "" || platform == "auto" {
		platform = "cpu"
	}
	cmd.Env = append(os.Environ(), "CUBEHIP_PLATFORM="+platform)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:\n%s", bin, out)
	return string(out)
}
