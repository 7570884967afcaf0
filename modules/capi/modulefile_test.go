package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// TestModuleFileC runs the C test of modules of compiled code over a file holding the
// device's code of a module, as `cubehip compile -o` writes it.
func TestModuleFileC(t *testing.T) {
	platform := os.Getenv("CUBEHIP_PLATFORM")
	if platform == "" || platform == "auto" {
		platform = "cpu"
	}
	d, err := server.Open(server.Options{Platform: platform, CacheDir: "-"})
	require.NoError(t, err)
	code, err := d.ModuleCode(server.NewModule(`#include <hip/hip_runtime.h>
extern "C" __global__ void add_one(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
`))
	require.NoError(t, d.Close())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "add_one.co")
	require.NoError(t, os.WriteFile(path, code, 0o644))
	out := runHostWith(t, compileHost(t, cc(), "tests/modulefile_test.c", "-std=c11", "-fsanitize=undefined", "-fno-sanitize-recover=all"), path)
	require.Contains(t, out, "checks passed")
	t.Log(strings.TrimSpace(out))
}
