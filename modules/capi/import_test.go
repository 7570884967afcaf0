package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImport runs the C test of cubehip_buffer_import and cubehip_stream_native_handle:
// the imported memory is shared both ways, its release runs once (after the buffer's
// release, after the graph that held it is destroyed, at close for one still held, and
// never for a refused import), and bad input is refused with the host's output zeroed.
func TestImport(t *testing.T) {
	bin := compileHost(t, cc(), "tests/import_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
