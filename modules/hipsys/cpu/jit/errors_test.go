package jit_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/cpu/jit"
)

func TestIncludesHipRuntimeAndInMemoryHeaders(t *testing.T) {
	const src = `
#include <hip/hip_runtime.h>
#include "params/scale.h"
extern "C" __global__ void scaled(int* out) { out[threadIdx.x] = SCALE * OFFSET + (int)threadIdx.x; }
`
	headers := []hipsys.Header{{Name: "params/scale.h", Source: "#define SCALE 3\n"}}
	img, log, err := compiler().Compile(src, "scaled.hip", headers, []string{"-DOFFSET=5", "--offload-arch=gfx90a", "-fgpu-rdc", "-O2", "--std=c++17"})
	require.NoError(t, err, log)
	m, err := jit.Load(img)
	require.NoError(t, err)
	defer m.Close()
	out := alloc[int32](t, 4)
	var args hipsys.KernelArgs
	launch(t, function(t, m, "scaled"), dim(1, 1, 1), dim(4, 1, 1), 0, args.Ptr(out.dev()))
	assert.Equal(t, []int32{15, 16, 17, 18}, out.s)
}

func TestCompileErrorReturnsLog(t *testing.T) {
	const src = "extern \"C\" __global__ void broken(int* p) {\n  p[0] = undefined_name;\n}\n"
	img, log, err := compiler().Compile(src, "broken.hip", nil, nil)
	require.Error(t, err)
	assert.Nil(t, img)
	assert.Contains(t, log, "broken.hip:2")
	assert.Contains(t, log, "undefined_name")
	var he *hipsys.Error
	require.True(t, errors.As(err, &he))
	assert.Equal(t, hipsys.RTCErrorCompilation, he.RTCStatus)
	assert.Equal(t, "hiprtcCompileProgram", he.Call)
	assert.Contains(t, he.Detail, "undefined_name")
	assert.ErrorIs(t, err, hipsys.RTCErrorCompilation)
}

func TestCompileRejectsEscapingHeaderName(t *testing.T) {
	_, _, err := compiler().Compile("", "x.hip", []hipsys.Header{{Name: "../evil.h", Source: ""}}, nil)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidInput)
}

func TestMissingCompilerIsNamed(t *testing.T) {
	t.Setenv("CXX", "/nonexistent/cubehip-c++")
	_, _, err := jit.NewCompiler(t.TempDir()).Compile(basicSource, "x.hip", nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/cubehip-c++")
	assert.ErrorIs(t, err, hipsys.RTCErrorInternalError)
}

func TestUnknownEntryIsNotFound(t *testing.T) {
	m := load(t, basicSource)
	for _, name := range []string{"nope", "twice", "square", "cubehip_abi_version", ""} {
		_, err := m.Function(name)
		assert.Equal(t, hipsys.ErrorNotFound, statusOf(err), name)
		var he *hipsys.Error
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "hipModuleGetFunction", he.Call)
	}
}

func TestLoadRejectsBadImages(t *testing.T) {
	good, _, err := compiler().Compile(basicSource, "test.hip", nil, nil)
	require.NoError(t, err)
	tests := []struct {
		name  string
		image []byte
	}{
		{"nil", nil},
		{"garbage", []byte("this is not a code object at all")},
		{"magic only", []byte("CUBEHIPCPU1\n")},
		{"truncated", good[:len(good)/2]},
		{"extra bytes", append(append([]byte{}, good...), 0)},
		{"elf of another kind", append([]byte("CUBEHIPCPU1\n\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"), "\x7fELF!"...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := jit.Load(tt.image)
			assert.Nil(t, m)
			assert.Equal(t, hipsys.ErrorInvalidImage, statusOf(err))
		})
	}
}

func TestLaunchRejectsInvalidShapes(t *testing.T) {
	f := function(t, load(t, basicSource), "empty")
	tests := []struct {
		name        string
		grid, block hipsys.Dim3
		shared      uint32
		want        hipsys.Status
	}{
		{"zero grid x", dim(0, 1, 1), dim(1, 1, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"zero grid z", dim(1, 1, 0), dim(1, 1, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"zero block y", dim(1, 1, 1), dim(1, 0, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"block over 1024 threads", dim(1, 1, 1), dim(32, 33, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"block x over 1024", dim(1, 1, 1), dim(1025, 1, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"block z over 64", dim(1, 1, 1), dim(1, 1, 65), 0, hipsys.ErrorInvalidConfiguration},
		{"grid x over 2^31-1", dim(1<<31, 1, 1), dim(1, 1, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"grid y over 65535", dim(1, 65536, 1), dim(1, 1, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"grid z over 65535", dim(1, 1, 65536), dim(1, 1, 1), 0, hipsys.ErrorInvalidConfiguration},
		{"shared over the limit", dim(1, 1, 1), dim(1, 1, 1), jit.MaxSharedMemPerBlock + 1, hipsys.ErrorInvalidValue},
		{"largest block", dim(1, 1, 1), dim(1024, 1, 1), jit.MaxSharedMemPerBlock, hipsys.Success},
		{"deepest block", dim(2, 3, 4), dim(4, 4, 64), 0, hipsys.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.Launch(tt.grid, tt.block, tt.shared, nil, nil)
			assert.Equal(t, tt.want, statusOf(err))
		})
	}
}

func TestLaunchChecksArguments(t *testing.T) {
	f := function(t, load(t, basicSource), "saxpy")
	var args hipsys.KernelArgs
	args.F32(1).Ptr(0).Ptr(0)
	err := f.Launch(dim(1, 1, 1), dim(1, 1, 1), 0, args.Buffer(), args.Offsets())
	assert.Equal(t, hipsys.ErrorInvalidValue, statusOf(err))
	assert.Contains(t, err.Error(), "kernel saxpy takes 4 arguments, got 3")

	// Right count, but the last argument runs past the end of the buffer.
	args.I32(0)
	err = f.Launch(dim(1, 1, 1), dim(1, 1, 1), 0, args.Buffer()[:len(args.Buffer())-1], args.Offsets())
	assert.Equal(t, hipsys.ErrorInvalidValue, statusOf(err))
}

func TestClosedModuleIsInvalidHandle(t *testing.T) {
	img, _, err := compiler().Compile(basicSource, "test.hip", nil, nil)
	require.NoError(t, err)
	m, err := jit.Load(img)
	require.NoError(t, err)
	f := function(t, m, "empty")
	require.NoError(t, f.Launch(dim(1, 1, 1), dim(1, 1, 1), 0, nil, nil))
	require.NoError(t, m.Close())

	assert.Equal(t, hipsys.ErrorInvalidHandle, statusOf(f.Launch(dim(1, 1, 1), dim(1, 1, 1), 0, nil, nil)))
	_, err = m.Function("empty")
	assert.Equal(t, hipsys.ErrorInvalidHandle, statusOf(err))
	assert.Equal(t, hipsys.ErrorInvalidHandle, statusOf(m.Close()))
}
