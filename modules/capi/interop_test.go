package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInterop runs the C test of cubehip_buffer_device_pointer: the address names the
// buffer's bytes (looked at from the host on the cpu device) and every error path
// leaves the host's output zeroed.
func TestInterop(t *testing.T) {
	bin := compileHost(t, cc(), "tests/interop_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
