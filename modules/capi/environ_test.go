package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEnvironSetByTheHost runs the C test of a variable set after the library was
// loaded: CUBEHIP_CACHE_DIR set with setenv before cubehip_device_open places the kernel
// cache there (the Go runtime's own copy of the environment is the process's first).
func TestEnvironSetByTheHost(t *testing.T) {
	bin := compileHost(t, cc(), "tests/environ_test.c", "-std=c11")
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	cmd := exec.Command(bin, dir)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUBEHIP_CACHE_DIR=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:\n%s", bin, out)
	require.Contains(t, string(out), "checks passed")
}
