package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKernelCheck runs the C test of the kernel checker: a checked device reports a bad
// read at the sync, and the report reads back field by field.
func TestKernelCheck(t *testing.T) {
	bin := compileHost(t, cc(), "tests/check_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
