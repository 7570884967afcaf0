package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGlobalsC runs the C test of the module-variable calls: a __constant__ mask
// written from the host steers the kernel, a __device__ counter it kept reads back, and
// each error returns its status with the variable named in the last error.
func TestGlobalsC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/globals_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}

// TestGlobalsCPP runs the same calls through cubehip.hpp's kernel methods.
func TestGlobalsCPP(t *testing.T) {
	out := runHost(t, compileHost(t, cxx(), "tests/globals_test.cpp", "-std=c++17", "-fsanitize=undefined", "-fno-sanitize-recover=all"))
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
