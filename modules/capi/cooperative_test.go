package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCooperativeC runs the C test of a cooperative kernel (CUBEHIP_KERNEL_COOPERATIVE,
// cubehip_kernel_max_active_blocks): a reduction across blocks at this_grid().sync() over
// the grid the occupancy sizes, one block more refused naming the limit, and on the cpu
// device the grid barrier in a launch that is not cooperative failing that launch.
func TestCooperativeC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/cooperative_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}

// TestCooperativeCPP runs the same through cubehip.hpp's kernel flags and max_active_blocks.
func TestCooperativeCPP(t *testing.T) {
	out := runHost(t, compileHost(t, cxx(), "tests/cooperative_test.cpp", "-std=c++17", "-fsanitize=undefined", "-fno-sanitize-recover=all"))
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
