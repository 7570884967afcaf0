package conformance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// brokenSource does not compile: an undeclared name. It is kept out of Kernels(), whose
// sources all compile.
const brokenSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void broken(int* out) {
    out[0] = undeclared_name;
}
`

// headerSource includes an in-memory header handed to hiprtcCreateProgram.
const headerSource = `#include <hip/hip_runtime.h>
#include "answer.h"
extern "C" __global__ void answer(int* out) {
    out[0] = ANSWER;
}
`

// dynamicParallelismSource launches a kernel from a kernel: CUDA's dynamic parallelism,
// which HIP does not have.
const dynamicParallelismSource = `#include <hip/hip_runtime.h>
__global__ void child(int* out) { out[threadIdx.x] = 1; }
extern "C" __global__ void parent(int* out) {
    if (threadIdx.x == 0)
        child<<<1, 32>>>(out);
}
`

// runValue loads code, runs its entry (one int* parameter) and returns what it wrote.
func (s *suite) runValue(t *testing.T, code []byte, entry string) int32 {
	t.Helper()
	m, err := s.p.ModuleLoadData(code)
	require.NoError(t, err)
	defer func() { assert.NoError(t, s.p.ModuleUnload(m)) }()
	fn, err := s.p.ModuleGetFunction(m, entry)
	require.NoError(t, err)
	out := s.zeros(t, 4)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	s.launch(t, fn, one, one, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(out))
	s.sync(t, hipsys.NullStream)
	return int32(bytesU32(s.download(t, out, 4))[0])
}

func (s *suite) rtc(t *testing.T) {
	p := s.p
	src := kernel("options").Source

	t.Run("program lifecycle", func(t *testing.T) {
		prog, err := p.RTCCreateProgram(src, "options.hip", nil)
		require.NoError(t, err)
		require.NotZero(t, prog)
		require.NoError(t, p.RTCCompileProgram(prog, nil))
		_, err = p.RTCGetProgramLog(prog) // may be empty: a clean compile need not say anything
		assert.NoError(t, err)
		code, err := p.RTCGetCode(prog)
		require.NoError(t, err)
		assert.NotEmpty(t, code)
		assert.NoError(t, p.RTCDestroyProgram(prog))
	})

	t.Run("options pass through", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			options []string
			want    int32
		}{
			{"none", nil, 1},
			{"O3", []string{"-O3"}, 1},
			{"define", []string{"-DVALUE=7"}, 7},
			{"define and O3", []string{"-O3", "-DVALUE=-3"}, -3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code := s.compile(t, src, "options.hip", nil, tc.options)
				assert.Equal(t, tc.want, s.runValue(t, code, "value"))
			})
		}
	})

	t.Run("headers", func(t *testing.T) {
		code := s.compile(t, headerSource, "answer.hip", []hipsys.Header{{Name: "answer.h", Source: "#define ANSWER 42\n"}}, nil)
		assert.Equal(t, int32(42), s.runValue(t, code, "answer"))
	})

	t.Run("compile error", func(t *testing.T) {
		prog, err := p.RTCCreateProgram(brokenSource, "broken.hip", nil)
		require.NoError(t, err, "creating a program does not compile it")
		defer func() { assert.NoError(t, p.RTCDestroyProgram(prog)) }()
		err = p.RTCCompileProgram(prog, nil)
		s.expectRTC(t, err, "hiprtcCompileProgram", hipsys.RTCErrorCompilation)
		var he *hipsys.Error
		if errors.As(err, &he) {
			assert.NotEmpty(t, he.Detail, "the error carries the compile log")
		}
		log, err := p.RTCGetProgramLog(prog)
		require.NoError(t, err)
		assert.Contains(t, log, "undeclared_name", "the log names the offending identifier")
	})

	t.Run("dynamic parallelism", func(t *testing.T) {
		// Refused by every platform alike, NVRTC's too (which could build it with the
		// device runtime), with a log that names the construct and where it is.
		prog, err := p.RTCCreateProgram(dynamicParallelismSource, "dp.hip", nil)
		require.NoError(t, err, "creating a program does not compile it")
		defer func() { assert.NoError(t, p.RTCDestroyProgram(prog)) }()
		err = p.RTCCompileProgram(prog, nil)
		s.expectRTC(t, err, "hiprtcCompileProgram", hipsys.RTCErrorCompilation)
		log, err := p.RTCGetProgramLog(prog)
		require.NoError(t, err)
		assert.Contains(t, log, "dp.hip:5: error: a launch of kernel 'child' (<<<...>>>) in device code")
		assert.Contains(t, log, "dynamic parallelism")
	})
}

func (s *suite) moduleErrors(t *testing.T) {
	p := s.p
	t.Run("missing function", func(t *testing.T) {
		m := s.module(t, "vector", "-O3")
		_, err := p.ModuleGetFunction(m, "no_such_kernel")
		// hipErrorNotFound (500) on AMD, CUDA's NOT_FOUND is 500 too; older ROCm said
		// hipErrorInvalidDeviceFunction.
		s.expect(t, err, "hipModuleGetFunction", hipsys.ErrorNotFound, hipsys.ErrorInvalidDeviceFunction)
	})

	t.Run("garbage image", func(t *testing.T) {
		// AMD's loader rejects a non-ELF image as hipErrorInvalidImage (older ROCm:
		// hipErrorInvalidKernelFile); CUDA takes a non-ELF image for PTX text and says
		// INVALID_PTX (218), which is hipErrorInvalidKernelFile's number.
		for _, img := range [][]byte{[]byte("this is not a code object at all"), {0x7f, 'E', 'L', 'F', 0, 0, 0}} {
			m, err := p.ModuleLoadData(img)
			if !s.expect(t, err, "hipModuleLoadData", hipsys.ErrorInvalidImage, hipsys.ErrorInvalidKernelFile, hipsys.ErrorInvalidValue) && err == nil {
				_ = p.ModuleUnload(m)
			}
		}
		_, err := p.ModuleLoadData(nil)
		s.expect(t, err, "hipModuleLoadData", hipsys.ErrorInvalidValue, hipsys.ErrorInvalidImage)
	})

	t.Run("bad launch shapes", func(t *testing.T) {
		fn := s.function(t, "vector", "vector_add")
		buf := s.zeros(t, 4096)
		args := new(hipsys.KernelArgs).Ptr(buf).Ptr(buf).Ptr(buf).I32(0)
		maxBlock := uint32(s.props.MaxThreadsPerBlock)
		for _, tc := range []struct {
			name        string
			grid, block hipsys.Dim3
		}{
			{"zero grid x", hipsys.Dim3{X: 0, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 1, Z: 1}},
			{"zero grid z", hipsys.Dim3{X: 1, Y: 1, Z: 0}, hipsys.Dim3{X: 32, Y: 1, Z: 1}},
			{"zero block x", hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 0, Y: 1, Z: 1}},
			{"zero block y", hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 32, Y: 0, Z: 1}},
			{"block over max threads", hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: max(2048, maxBlock+1), Y: 1, Z: 1}},
			{"block over max threads in 2-D", hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: maxBlock/64 + 1, Z: 1}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s.expect(t, p.ModuleLaunchKernel(fn, tc.grid, tc.block, 0, hipsys.NullStream, args), "hipModuleLaunchKernel", badLaunch...)
			})
		}
		s.sync(t, hipsys.NullStream)
	})

	t.Run("no function", func(t *testing.T) {
		one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
		err := p.ModuleLaunchKernel(0, one, one, 0, hipsys.NullStream, nil)
		// A NULL function: AMD says hipErrorInvalidResourceHandle (400, our
		// InvalidHandle), CUDA INVALID_HANDLE (400) or INVALID_VALUE.
		s.expect(t, err, "hipModuleLaunchKernel", hipsys.ErrorInvalidHandle, hipsys.ErrorInvalidValue, hipsys.ErrorInvalidDeviceFunction)
	})

	t.Run("load and unload", func(t *testing.T) {
		k := kernel("vector")
		code := s.compile(t, k.Source, "vector.hip", nil, nil)
		m, err := p.ModuleLoadData(code)
		require.NoError(t, err)
		for _, e := range k.Entries {
			_, err := p.ModuleGetFunction(m, e)
			assert.NoError(t, err, e)
		}
		assert.NoError(t, p.ModuleUnload(m))
	})
}
