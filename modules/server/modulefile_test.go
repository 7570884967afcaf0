package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/server"
)

// A module's code, compiled ahead of time and written to a file, is a module again in
// ReadModuleFile: nothing is compiled, its kernels launch with the IO given, and its
// variables are its own; a source file is read as source.
func TestModuleFile(t *testing.T) {
	src := moduleSource + "\n// " + t.Name()
	d, f := openDevice(t, server.Options{CacheDir: "-"})
	code, err := d.ModuleCode(server.NewModule(src))
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "k.co")
	require.NoError(t, os.WriteFile(path, code, 0o644))

	m, err := server.ReadModuleFile(path)
	require.NoError(t, err)
	assert.Equal(t, code, m.Code())
	assert.Empty(t, m.Source())
	assert.True(t, m.IsCode())
	assert.Equal(t, server.NewModuleFromCode(code).ID(), m.ID())
	compiles := f.Calls("hiprtcCompileProgram")

	scale := m.Kernel("scale", server.Block(server.Dim3{X: 4}), server.IO(server.Read, server.Write))
	require.NoError(t, server.WriteGlobalSlice(d.Stream, m, "coeffs", []float32{1, 2, 3, 4}))
	x, y := upload(t, d.Stream, 1, 1, 1, 1, 2, 2, 2, 2), alloc(t, d.Stream, 32)
	require.NoError(t, d.Call(scale, server.Dim3{X: 2}, x, y, 8))
	assert.Equal(t, []float32{1, 2, 3, 4, 2, 4, 6, 8}, readFloats(t, d.Stream, y))
	assert.Equal(t, compiles, f.Calls("hiprtcCompileProgram"), "code is not compiled")

	// Without IO, a kernel that takes buffers is refused with what to do.
	err = d.Call(m.Kernel("scale"), server.Dim3{X: 2}, x, y, 8)
	assert.ErrorContains(t, err, "give IO")
	// An entry the code lacks.
	err = d.Compile(m.Kernel("nope"))
	assert.ErrorContains(t, err, "has no such kernel")
	assert.NotErrorIs(t, err, server.ErrCompilation)

	// A source file is source.
	hip := filepath.Join(dir, "k.hip")
	require.NoError(t, os.WriteFile(hip, []byte(src), 0o644))
	sm, err := server.ReadModuleFile(hip)
	require.NoError(t, err)
	assert.Equal(t, src, sm.Source())
	assert.Nil(t, sm.Code())
	assert.False(t, sm.IsCode())

	// Code for nothing loads as nothing: an error naming the module, no compile error.
	junk := filepath.Join(dir, "junk.co")
	require.NoError(t, os.WriteFile(junk, []byte("junk"), 0o644))
	jm, err := server.ReadModuleFile(junk)
	require.NoError(t, err)
	err = d.LoadModule(jm)
	assert.ErrorContains(t, err, jm.ID().String())
	assert.NotErrorIs(t, err, server.ErrCompilation)
	_, err = server.ReadModuleFile(filepath.Join(dir, "missing.co"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A kernel disk cache entry is a module file: sealed under its name, it is unsealed
// (and a renamed or damaged one refused).
func TestModuleFileOfACacheEntry(t *testing.T) {
	src := moduleSource + "\n// " + t.Name()
	cache := t.TempDir()
	d, _ := openDevice(t, server.Options{CacheDir: cache})
	require.NoError(t, d.LoadModule(server.NewModule(src)))
	entries, err := filepath.Glob(filepath.Join(cache, "kernels", "*.co"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	m, err := server.ReadModuleFile(entries[0])
	require.NoError(t, err)
	x, y := upload(t, d.Stream, 1, 2), alloc(t, d.Stream, 8)
	require.NoError(t, server.WriteGlobalSlice(d.Stream, m, "coeffs", []float32{3, 3, 3, 3}))
	require.NoError(t, d.Call(m.Kernel("scale", server.Block(server.Dim3{X: 2}), server.IO(server.Read, server.Write)), server.Dim3{X: 1}, x, y, 2))
	assert.Equal(t, []float32{3, 6}, readFloats(t, d.Stream, y))

	b, err := os.ReadFile(entries[0])
	require.NoError(t, err)
	renamed := filepath.Join(t.TempDir(), "other.co")
	require.NoError(t, os.WriteFile(renamed, b, 0o644))
	_, err = server.ReadModuleFile(renamed)
	assert.ErrorContains(t, err, "damaged, truncated or renamed")
}

// Code CUDA's own compiler wrote to a file (a cubin, a fatbin, PTX, as a CUDA program's
// build leaves them) is a module on the nvidia platform: read by its path, its kernel
// launched by name with the IO given, its __device__ variable written and read by name.
// The files are nvcc's, on the machine that runs the test.
func TestModuleFilesOfNvcc(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	if d.Platform() != "nvidia" {
		t.Skipf("nvcc's files load on the nvidia platform (this is %s)", d.Platform())
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("no nvcc on this machine")
	}
	const src = `
__device__ float coeffs[4];
extern "C" __global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = coeffs[i % 4] * x[i];
}`
	dir := t.TempDir()
	cu := filepath.Join(dir, "scale.cu")
	require.NoError(t, os.WriteFile(cu, []byte(src), 0o644))
	for _, kind := range []string{"cubin", "fatbin", "ptx"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(dir, "scale."+kind)
			out, err := exec.Command(nvcc, "-"+kind, "-arch=native", "-o", path, cu).CombinedOutput()
			require.NoError(t, err, "%s", out)
			m, err := server.ReadModuleFile(path)
			require.NoError(t, err)
			require.True(t, m.IsCode())
			require.NoError(t, server.WriteGlobalSlice(d.Stream, m, "coeffs", []float32{1, 2, 3, 4}))
			x, y := upload(t, d.Stream, 1, 1, 1, 1, 2, 2, 2, 2), alloc(t, d.Stream, 32)
			k := m.Kernel("scale", server.Block(server.Dim3{X: 4}), server.IO(server.Read, server.Write))
			require.NoError(t, d.Call(k, server.Dim3{X: 2}, x, y, 8))
			assert.Equal(t, []float32{1, 2, 3, 4, 2, 4, 6, 8}, readFloats(t, d.Stream, y))
			got, err := server.ReadGlobalSlice[float32](d.Stream, m, "coeffs")
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 4}, got)
		})
	}
}
