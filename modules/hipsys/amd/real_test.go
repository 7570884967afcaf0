package amd_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// envRequire makes a missing ROCm a test failure instead of a skip, and envRequireGPU a
// missing GPU: CI installs ROCm (and, on the ROCm runners, has a GPU) and sets them, so a
// broken install cannot pass as "skipped".
const (
	envRequire    = "CUBEHIP_REQUIRE_AMD"
	envRequireGPU = "CUBEHIP_REQUIRE_AMD_GPU"
)

// real opens the amd platform over the installed ROCm, or skips when there is none.
func real(t *testing.T) hipsys.Platform {
	t.Helper()
	p, err := hipsys.Open("amd")
	if errors.Is(err, dl.ErrNotFound) && os.Getenv(envRequire) == "" {
		t.Skipf("no ROCm installed (%v); set %s=1 to make this a failure", err, envRequire)
	}
	require.NoError(t, err)
	return p
}

// gpu is the platform when it has a GPU; skipped otherwise, with HIP's own reason.
func gpu(t *testing.T) hipsys.Platform {
	t.Helper()
	p := real(t)
	if n, err := p.GetDeviceCount(); err != nil || n == 0 {
		if os.Getenv(envRequireGPU) != "" {
			t.Fatalf("%s is set but there is no AMD GPU: %v", envRequireGPU, err)
		}
		t.Skipf("no AMD GPU: %v", err)
	}
	return p
}

func TestOpenLoadsTheInstalledRuntime(t *testing.T) {
	p := real(t)
	assert.Equal(t, "amd", p.Name())
	ap := p.(*amd.Platform)
	assert.GreaterOrEqual(t, ap.Version(), amd.MinVersion)
	assert.Contains(t, ap.Library(), "libamdhip64")
	t.Logf("HIP %d from %s", ap.Version(), ap.Library())
}

func TestDeviceCountWithoutGPUIsHipErrorNoDevice(t *testing.T) {
	p := real(t)
	n, err := p.GetDeviceCount()
	if err == nil {
		t.Skipf("this machine has %d AMD GPU(s)", n)
	}
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, hipsys.ErrorNoDevice, he.Status)
	assert.Equal(t, "hipGetDeviceCount", he.Call)
	assert.Contains(t, err.Error(), "amd: hipGetDeviceCount: hipErrorNoDevice (100): no AMD GPU visible (")
}

func TestRTCWithoutDeviceNeedsAnExplicitArch(t *testing.T) {
	p := real(t)
	if _, err := p.GetDeviceCount(); err == nil {
		t.Skip("this machine has an AMD GPU: the architecture comes from it")
	}
	prog, err := p.RTCCreateProgram(`#include "answer.h"
extern "C" __global__ void answer(int* out) { out[0] = ANSWER; }`, "answer.hip",
		[]hipsys.Header{{Name: "answer.h", Source: "#define ANSWER 42\n"}})
	require.NoError(t, err)
	err = p.RTCCompileProgram(prog, nil)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidOption)
	assert.Contains(t, err.Error(), "no --offload-arch given")

	require.NoError(t, p.RTCCompileProgram(prog, []string{"--offload-arch=gfx90a"}))
	code, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	assert.NoError(t, amd.CheckCodeObject(code, "gfx90a", "answer"))
	_, err = p.RTCGetProgramLog(prog)
	assert.NoError(t, err)
	require.NoError(t, p.RTCDestroyProgram(prog))
	assert.ErrorIs(t, p.RTCDestroyProgram(prog), hipsys.RTCErrorInvalidProgram)
	_, err = p.RTCGetCode(prog)
	assert.ErrorIs(t, err, hipsys.RTCErrorInvalidProgram)
}
