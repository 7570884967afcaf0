package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPeer runs the C test of the several-device functions on three cpu devices.
func TestPeer(t *testing.T) {
	bin := compileHost(t, cc(), "tests/peer_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all")
	t.Setenv("CUBEHIP_CPU_DEVICES", "3")
	t.Setenv("CUBEHIP_PLATFORM", "cpu")
	out := runHost(t, bin)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
