package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFuncAttributeC runs the C test of cubehip_kernel_get_attribute and
// cubehip_kernel_set_attribute: the attributes read, a launch over a lowered dynamic
// shared-memory limit refused, one of 64 KiB after raising it, a value over the device's
// refused.
func TestFuncAttributeC(t *testing.T) {
	bin := compileHost(t, cc(), "tests/funcattr_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}

// TestFuncAttributeCPP runs the same through cubehip.hpp's attribute, set_attribute and
// set_max_dynamic_shared_size_bytes.
func TestFuncAttributeCPP(t *testing.T) {
	out := runHost(t, compileHost(t, cxx(), "tests/funcattr_test.cpp", "-std=c++17", "-fsanitize=undefined", "-fno-sanitize-recover=all"))
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
