package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain keeps the kernel caches in a temporary directory, so the tests neither read
// nor leave a user's cache.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cubehip-cmd-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("CUBEHIP_CACHE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestCommands(t *testing.T) {
	cases := []struct {
		name string
		run  func(*bytes.Buffer) error
		want []string
	}{
		{"devices", func(out *bytes.Buffer) error { return runDevices(out, nil) },
			[]string{"device 0:", "architecture", "compute units"}},
		{"demo", func(out *bytes.Buffer) error { return runDemo(out, []string{"-n", "5000"}) },
			[]string{
				"1. compile", "result checked", "captured 3 saxpy launches", "device time",
				"in use:", "read out1             ok", "read out2             FAILED", "hipErrorLaunchFailure",
				"read out3             ok", "read x (read by all)  ok", "out3 now reports true",
				"rewrote out2 from Go memory: read now returns <nil>", "0 allocations left",
			}},
		{"bench", func(out *bytes.Buffer) error { return runBench(out, []string{"-scale", "0.01"}) },
			[]string{"launch", "alloc+free 1 MiB", "read 4 B, one stream", "read 4 B, streams", "launch, streams", "replay 10, one stream", "replay 10, streams", "needs the anchor", "write 256 MiB", "read 256 MiB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, c.run(&out), out.String())
			for _, w := range c.want {
				assert.Contains(t, out.String(), w)
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	var out bytes.Buffer
	assert.Error(t, runDemo(&out, []string{"-n", "0"}))
	assert.Error(t, runDemo(&out, []string{"-platform", "no-such"}))
	err := runBench(&out, []string{"-nope"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "flag provided but not defined"))
}
