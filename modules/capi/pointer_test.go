package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRawPointers runs the C test of raw device addresses as launch arguments and
// cubehip_buffer_at: an address inside a live buffer is that buffer's (the launch's writes
// land there and nowhere else), any other is refused naming it.
func TestRawPointers(t *testing.T) {
	bin := compileHost(t, cc(), "tests/pointer_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
