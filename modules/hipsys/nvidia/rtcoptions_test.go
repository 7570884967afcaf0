package nvidia

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

func TestTranslateOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", nil, []string{}},
		{"optimization levels dropped", []string{"-O3", "-O0", "-O"}, []string{}},
		{"std both spellings", []string{"--std=c++17", "-std=c++20"}, []string{"-std=c++17", "-std=c++20"}},
		{"defines and includes pass", []string{"-DVALUE=7", "-I/opt/inc"}, []string{"-DVALUE=7", "-I/opt/inc"}},
		{"separated define joined", []string{"-D", "N=4", "-I", "/x"}, []string{"-DN=4", "-I/x"}},
		{"amd options dropped", []string{"--offload-arch=gfx90a", "-mcumode", "-mwavefrontsize64", "-fgpu-rdc", "-g"}, []string{}},
		{"fast math", []string{"-ffast-math"}, []string{"--use_fast_math"}},
		{"unknown passes through", []string{"--bogus"}, []string{"--bogus"}},
		{"blank skipped", []string{" ", "-DA"}, []string{"-DA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, translateOptions(tc.in))
		})
	}
}

func TestArchOption(t *testing.T) {
	cuda13 := []int{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}
	for _, tc := range []struct {
		name      string
		cc        int
		supported []int
		want      string
		cubin     bool
	}{
		{"device known: CUBIN for its SM", 90, cuda13, "--gpu-architecture=sm_90", true},
		{"NVRTC older than device: PTX of newest below", 100, []int{75, 80, 86, 89, 90}, "--gpu-architecture=compute_90", false},
		{"gap in the list: newest below", 91, []int{80, 90}, "--gpu-architecture=compute_90", false},
		{"no list (before 11.2): device SM", 86, nil, "--gpu-architecture=sm_86", true},
		{"device older than NVRTC: its SM, NVRTC explains", 60, cuda13, "--gpu-architecture=sm_60", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt, cubin := archOption(tc.cc, tc.supported)
			assert.Equal(t, tc.want, opt)
			assert.Equal(t, tc.cubin, cubin)
		})
	}
}

func TestCompileOptions(t *testing.T) {
	nv := &nvrtcLib{major: 13, archs: []int{80, 90}}
	opts, cubin := compileOptions([]string{"-O3", "-DX=1"}, 90, nv)
	assert.True(t, cubin)
	assert.Equal(t, []string{"-DX=1", "--gpu-architecture=sm_90"}, opts)

	// The caller's own architecture stands; compute_ means PTX.
	opts, cubin = compileOptions([]string{"--gpu-architecture=compute_80"}, 90, nv)
	assert.False(t, cubin)
	assert.Equal(t, 1, strings.Count(strings.Join(opts, " "), "gpu-architecture"))

	nv.includes = []string{"/usr/local/cuda/include", "/usr/local/cuda/include/cccl"}
	opts, _ = compileOptions(nil, 90, nv)
	assert.Equal(t, []string{"--gpu-architecture=sm_90", "-I/usr/local/cuda/include", "-I/usr/local/cuda/include/cccl"}, opts)
}

func TestHIPRuntimeHeader(t *testing.T) {
	for _, want := range []string{
		"#define hipThreadIdx_x (threadIdx.x)",
		"#define hipBlockIdx_x (blockIdx.x)",
		"#define hipBlockDim_x (blockDim.x)",
		"#define hipGridDim_x (gridDim.x)",
		"#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];",
		"__shfl_sync(__HIP_FULL_MASK",
		"__shfl_down_sync(__HIP_FULL_MASK",
		"__shfl_up_sync(__HIP_FULL_MASK",
		"__shfl_xor_sync(__HIP_FULL_MASK",
		"__ballot_sync(__HIP_FULL_MASK",
		"__any_sync(__HIP_FULL_MASK",
		"__all_sync(__HIP_FULL_MASK",
		"__HIP_PLATFORM_NVIDIA__",
		"typedef unsigned int uint32_t;",
	} {
		assert.Contains(t, hipRuntimeHeader, want)
	}
	assert.Contains(t, hipFP16Header, "#include <cuda_fp16.h>")
	assert.Contains(t, hipRuntimeHeader, "#define NULL 0")
	assert.Contains(t, hipCooperativeGroupsHeader, "#include <cooperative_groups.h>")
	assert.Contains(t, hipComplexHeader, "typedef float2 hipFloatComplex;")
}

func TestProgramHeadersCallerWins(t *testing.T) {
	all := programHeaders(nil)
	names := make([]string, len(all))
	for i, h := range all {
		names[i] = h.Name
	}
	assert.Equal(t, []string{"hip/hip_runtime.h", "hip/hip_runtime_api.h", "hip/hip_fp16.h", "hip/hip_bf16.h",
		"hip/hip_complex.h", "hip/hip_bfloat16.h", "hip/hip_cooperative_groups.h", "hip/hip_vector_types.h", "hip/math_functions.h",
		"hip/device_functions.h", "hip/hip_common.h", "type_traits", "stdint.h", "cstdint",
		"stddef.h", "cstddef", "limits.h", "climits", "float.h", "cfloat", "math.h", "cmath", "stdio.h", "cstdio",
		"stdlib.h", "cstdlib", "string.h", "cstring", "assert.h", "cassert", "new"}, names)

	mine := hipsys.Header{Name: "hip/hip_fp16.h", Source: "// mine"}
	all = programHeaders([]hipsys.Header{mine, {Name: "util.h", Source: "//"}})
	assert.Len(t, all, len(builtinHeaders)+1)
	assert.Equal(t, mine, all[0])
	for _, h := range all[2:] {
		assert.NotEqual(t, "hip/hip_fp16.h", h.Name, "the built-in fp16 header is replaced")
	}
}
