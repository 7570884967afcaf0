package amd_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// archs is what the ahead-of-time tests target: gfx90a must work on every supported
// ROCm; the others where the installed compiler knows them (ROCm 5.2 lacks gfx1100).
var archs = []string{"gfx90a", "gfx908", "gfx1030", "gfx1100"}

func supported(t *testing.T) []string {
	t.Helper()
	s, err := amd.SupportedArchs()
	if errors.Is(err, dl.ErrNotFound) && os.Getenv(envRequire) == "" {
		t.Skipf("no ROCm installed (%v)", err)
	}
	require.NoError(t, err)
	require.Contains(t, s, "gfx90a")
	return s
}

func TestConformanceKernelsCompileAheadOfTime(t *testing.T) {
	have := supported(t)
	kernels := conformance.Kernels()
	require.NotEmpty(t, kernels)
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			if !slices.Contains(have, arch) {
				t.Skipf("this ROCm's compiler does not support %s", arch)
			}
			for _, k := range kernels {
				t.Run(k.Name, func(t *testing.T) {
					t.Parallel()
					code, log, err := amd.CompileFor(arch, k.Source, k.Name+".hip", nil)
					require.NoError(t, err, "log:\n%s", log)
					assert.NoError(t, amd.CheckCodeObject(code, arch, k.Entries...))
				})
			}
		})
	}
}

// Every architecture the compiler knows and the mach table names compiles, and the code
// object carries that architecture's EF_AMDGPU_MACH: this pins the table to the compiler.
func TestMachNumbersMatchTheCompiler(t *testing.T) {
	const src = `extern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }`
	checked := 0
	for _, arch := range supported(t) {
		code, log, err := amd.CompileFor(arch, src, "k.hip", nil)
		require.NoError(t, err, "%s: %s", arch, log)
		co, err := amd.ParseCodeObject(code, arch)
		require.NoError(t, err, arch)
		if co.Arch == "" {
			t.Logf("%s: mach %#x is not in the table", arch, co.Mach)
			continue
		}
		assert.Equal(t, arch, co.Arch, "mach %#x", co.Mach)
		checked++
	}
	assert.Greater(t, checked, 10)
}

func TestCompileFailuresSayWhy(t *testing.T) {
	supported(t)
	tests := []struct {
		name, arch, src string
		opts            []string
		status          hipsys.RTCStatus
		detail          []string
	}{
		{"broken kernel gives hiprtc's log", "gfx90a",
			"extern \"C\" __global__ void k(int* p) { p[0] = undeclared_thing; }", nil,
			hipsys.RTCErrorCompilation, []string{"undeclared_thing", "error:"}},
		{"unknown architecture names the known ones", "gfx9999",
			"extern \"C\" __global__ void k() {}", nil,
			hipsys.RTCErrorInvalidOption, []string{"does not support gfx9999", "gfx90a"}},
		{"conflicting architecture", "gfx90a", "extern \"C\" __global__ void k() {}",
			[]string{"--offload-arch=gfx908"}, hipsys.RTCErrorInvalidOption, []string{"gfx908"}},
		{"no architecture", "", "extern \"C\" __global__ void k() {}", nil,
			hipsys.RTCErrorInvalidOption, []string{"no architecture"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := amd.CompileFor(tc.arch, tc.src, "k.hip", tc.opts)
			var he *hipsys.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.status, he.RTCStatus)
			assert.Equal(t, "hiprtcCompileProgram", he.Call)
			for _, d := range tc.detail {
				assert.Contains(t, he.Detail, d)
			}
		})
	}
}

func TestCompileOptionsReachTheCompiler(t *testing.T) {
	supported(t)
	src := `#include <hip/hip_runtime.h>
#ifndef NAME
#error NAME is not defined
#endif
#define CAT(a, b) a##b
#define ENTRY(n) CAT(entry_, n)
extern "C" __global__ void ENTRY(NAME)(int* p) { p[threadIdx.x] = 1; }`
	for _, name := range []string{"one", "two"} {
		code, log, err := amd.CompileFor("gfx90a", src, "opts.hip", []string{"-DNAME=" + name, "-O2"})
		require.NoError(t, err, log)
		assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", "entry_"+name))
	}
	_, _, err := amd.CompileFor("gfx90a", src, "opts.hip", nil)
	assert.ErrorIs(t, err, hipsys.RTCErrorCompilation)
	assert.Contains(t, err.Error(), "NAME is not defined")
}

func ExampleCompileFor() {
	code, _, err := amd.CompileFor("gfx90a", `extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2; }`, "k.hip", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(amd.CheckCodeObject(code, "gfx90a", "k"))
}

// ROCm 5.2's hiprtc crashes when two programs compile at once; the platform serializes
// hiprtc, so concurrent callers are safe.
func TestCompileForConcurrentSafe(t *testing.T) {
	supported(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entry := fmt.Sprintf("k%d", i)
			code, log, err := amd.CompileFor("gfx90a", `extern "C" __global__ void `+entry+`(int* p) { p[0] = 1; }`, entry+".hip", nil)
			if assert.NoError(t, err, log) {
				assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", entry))
			}
		}()
	}
	wg.Wait()
}
