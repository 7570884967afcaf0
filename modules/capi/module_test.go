package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModuleC runs the C test of the module calls: kernels of one module share its
// variables, C++ kernels are taken by name expression, and the errors.
func TestModuleC(t *testing.T) {
	out := runHost(t, compileHost(t, cc(), "tests/module_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all"))
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
