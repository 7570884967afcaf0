package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/server"
)

const goodKernels = `#include <hip/hip_runtime.h>
extern "C" __global__ void cmd_add_one(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" __global__ __launch_bounds__(256) void cmd_twice(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
__device__ float helper(float v) { return v; }
`

const badKernel = `#include <hip/hip_runtime.h>
extern "C" __global__ void cmd_bad(float* x) {
    x[0] = not_declared;
}
`

func writeSource(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// compile on the device compiles and loads every extern "C" kernel of the file (found
// by its declaration), so the kernel disk cache holds it; -json says so per entry.
func TestCompileForTheDevice(t *testing.T) {
	good := writeSource(t, "good.hip", goodKernels)
	cache := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", cache, "-json", good}), out.String())
	var rs []compileResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &rs), out.String())
	require.Len(t, rs, 2)
	for i, entry := range []string{"cmd_add_one", "cmd_twice"} {
		assert.Equal(t, entry, rs[i].Entry)
		assert.True(t, rs[i].OK)
		assert.Equal(t, "cpu", rs[i].Platform)
		assert.NotEmpty(t, rs[i].Arch)
		assert.Empty(t, rs[i].Error)
	}
	cached, err := os.ReadDir(cache)
	require.NoError(t, err)
	assert.NotEmpty(t, cached, "the code is in the kernel disk cache")

	out.Reset()
	require.NoError(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", cache, "-entry", "cmd_twice", good}))
	assert.Contains(t, out.String(), "good.hip cmd_twice for cpu")
	assert.Contains(t, out.String(), "ok, in the kernel cache")
	assert.NotContains(t, out.String(), "cmd_add_one")
}

// compile -o on the device writes each file's module as the device's code: a later
// process loads the file (ReadModuleFile) without compiling and launches its kernels.
func TestCompileModuleFileForTheDevice(t *testing.T) {
	good := writeSource(t, "good.hip", goodKernels+"// "+t.Name()+"\n")
	dir := filepath.Join(t.TempDir(), "out") // made by the command
	var out bytes.Buffer
	require.NoError(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", "-o", dir, "-json", good}), out.String())
	var rs []compileResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &rs), out.String())
	require.Len(t, rs, 3, "two entries and the module")
	mod := rs[2]
	require.True(t, mod.OK, mod.Error)
	assert.Empty(t, mod.Entry)
	assert.Equal(t, filepath.Join(dir, "good."+archFileName(mod.Arch)+".co"), mod.Output)

	m, err := server.ReadModuleFile(mod.Output)
	require.NoError(t, err)
	d, err := server.Open(server.Options{Platform: "cpu", CacheDir: "-"})
	require.NoError(t, err)
	defer d.Close()
	x, err := server.UploadSlice(d.Stream, []float32{1, 2, 3})
	require.NoError(t, err)
	defer x.Release()
	add := m.Kernel("cmd_add_one", server.Block(server.Dim3{X: 4}), server.IO(server.ReadWrite))
	twice := m.Kernel("cmd_twice", server.Block(server.Dim3{X: 4}), server.IO(server.ReadWrite))
	require.NoError(t, d.Call(add, server.Dim3{X: 1}, x, uint32(3)))
	require.NoError(t, d.Call(twice, server.Dim3{X: 1}, x, uint32(3)))
	got, err := server.ReadSlice[float32](d.Stream, x)
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 6, 8}, got)

	out.Reset()
	require.NoError(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", "-o", dir, "-entry", "cmd_twice", good}))
	assert.Contains(t, out.String(), "ok, "+mod.Output)

	bad := writeSource(t, "bad.hip", badKernel)
	out.Reset()
	require.Error(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", "-o", dir, bad}))
	assert.NoFileExists(t, filepath.Join(dir, "bad."+archFileName(mod.Arch)+".co"))
}

// A failed compile prints the compiler's log once, citing the user's file and line,
// and fails the command; so does an entry the file does not define.
func TestCompileFailures(t *testing.T) {
	bad := writeSource(t, "bad.hip", badKernel)
	var out bytes.Buffer
	err := runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", bad})
	require.ErrorContains(t, err, "1 of 1 compiles failed")
	assert.Contains(t, out.String(), "bad.hip cmd_bad for cpu")
	assert.Contains(t, out.String(), "FAILED: compile error (g++)")
	assert.Contains(t, out.String(), "bad.hip:3:")
	assert.Contains(t, out.String(), "not_declared")
	assert.NotContains(t, out.String(), "CUBEHIP_")

	out.Reset()
	err = runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", "-json", bad})
	require.Error(t, err)
	var rs []compileResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &rs), out.String())
	require.Len(t, rs, 1)
	assert.False(t, rs[0].OK)
	assert.Contains(t, rs[0].Log, "not_declared")

	good := writeSource(t, "good.hip", goodKernels)
	out.Reset()
	err = runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", "-entry", "no_such", good})
	require.Error(t, err)
	assert.Contains(t, out.String(), "no_such")

	none := writeSource(t, "none.hip", "__device__ int f() { return 1; }\n")
	out.Reset()
	require.Error(t, runCompile(&out, []string{"-platform", "cpu", none}))
	assert.Contains(t, out.String(), "no kernel found")

	assert.ErrorContains(t, runCompile(&out, nil), "no source file")
	assert.ErrorContains(t, runCompile(&out, []string{"-offload-arch", "gfx90a", "-entry", "cmd_twice", good}), "whole file")
	assert.Error(t, runCompile(&out, []string{filepath.Join(t.TempDir(), "missing.hip")}))
}

// -offload-arch compiles for AMD architectures with hiprtc alone, no GPU: a code object
// file per architecture, and an architecture the compiler lacks fails with its reason.
func TestCompileOffloadArch(t *testing.T) {
	if _, _, err := amd.CompileFor("gfx90a", "extern \"C\" __global__ void probe() {}", "probe.hip", nil); err != nil {
		t.Skipf("no AMD compiler (libamdhip64 and hiprtc) on this machine: %v", err)
	}
	good, bad := writeSource(t, "good.hip", goodKernels), writeSource(t, "bad.hip", badKernel)
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, runCompile(&out, []string{"-offload-arch", "gfx90a,gfx908", "-o", dir, good}), out.String())
	for _, a := range []string{"gfx90a", "gfx908"} {
		b, err := os.ReadFile(filepath.Join(dir, "good."+a+".co"))
		require.NoError(t, err, out.String())
		assert.True(t, bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.HasPrefix(b, []byte("__CLANG_OFFLOAD_BUNDLE__")), "a code object (an ELF, or a bundle of them)")
		// A module file of the platform's own code, for ReadModuleFile (loading it needs an AMD GPU).
		m, err := server.ReadModuleFile(filepath.Join(dir, "good."+a+".co"))
		require.NoError(t, err)
		assert.Equal(t, b, m.Code())
	}

	out.Reset()
	err := runCompile(&out, []string{"-offload-arch", "gfx90a", "-o", dir, "-json", bad})
	require.Error(t, err)
	var rs []compileResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &rs), out.String())
	require.Len(t, rs, 1)
	assert.False(t, rs[0].OK)
	assert.Contains(t, rs[0].Error, "HIPRTC_ERROR_COMPILATION")
	assert.Contains(t, rs[0].Log, "bad.hip:3:")
	assert.NoFileExists(t, filepath.Join(dir, "bad.gfx90a.co"))

	out.Reset()
	require.Error(t, runCompile(&out, []string{"-offload-arch", "gfx9999", "-o", dir, good}))
	assert.Contains(t, out.String(), "does not support gfx9999")
}

// A compile error in a file of several entries fails each of them with the same log (the
// whole file is compiled for each): the log is printed once, under the first, and the
// others point to it. -json keeps the log in every result.
func TestCompileLogOncePerSource(t *testing.T) {
	bad := writeSource(t, "bad2.hip", `#include <hip/hip_runtime.h>
extern "C" __global__ void cmd_first(float* x) { x[0] = not_declared; }
extern "C" __global__ void cmd_second(float* x) { x[0] = 2.0f; }
`)
	var out bytes.Buffer
	err := runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", bad})
	require.ErrorContains(t, err, "2 of 2 compiles failed")
	assert.Contains(t, out.String(), "bad2.hip cmd_first for cpu")
	assert.Contains(t, out.String(), "bad2.hip cmd_second for cpu")
	assert.Equal(t, 1, strings.Count(out.String(), "bad2.hip:2:"), "the log once per source:\n%s", out.String())
	assert.Contains(t, out.String(), "(the same compiler log as cmd_first, above)")

	out.Reset()
	require.Error(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", "-json", bad}))
	var rs []compileResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &rs), out.String())
	require.Len(t, rs, 2)
	for _, r := range rs {
		assert.Contains(t, r.Log, "not_declared", r.Entry)
	}

	// Two files with the same error: each file's log is printed, once each.
	other := writeSource(t, "bad3.hip", badKernel)
	out.Reset()
	require.Error(t, runCompile(&out, []string{"-platform", "cpu", "-cache-dir", "-", bad, other}))
	assert.Equal(t, 1, strings.Count(out.String(), "bad2.hip:2:"), out.String())
	assert.Equal(t, 1, strings.Count(out.String(), "bad3.hip:3:"), out.String())
}
