package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeclaredC runs the C test of what a launch reads from the kernel's declaration:
// each buffer's access when desc.access is NULL (and a clear error where the declaration
// cannot be read), a typed buffer's element type against the declared pointee, and the
// range of each signed scalar kind.
func TestDeclaredC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/declared_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
