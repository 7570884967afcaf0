package conformance_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// The layout table is AMD's headers' own: hiprtc compiles the layout kernel with a
// static_assert of each value, for an AMD architecture, on a machine with no GPU.
func TestLayoutTableIsAMDsHeaders(t *testing.T) {
	if _, err := amd.SupportedArchs(); errors.Is(err, dl.ErrNotFound) {
		t.Skipf("no ROCm hiprtc here (%v)", err)
	}
	_, log, err := amd.CompileFor("gfx90a", conformance.LayoutAsserts("amd"), "layout_asserts.hip", nil)
	require.NoError(t, err, "log:\n%s", log)
}

// The cpu device's prelude gives the same values at compile time as its kernel writes at
// run time (TestCPU's types/layout).
func TestLayoutTableIsTheCPUPrelude(t *testing.T) {
	p := cpu(t)
	prog, err := p.RTCCreateProgram(conformance.LayoutAsserts("cpu"), "layout_asserts.hip", nil)
	require.NoError(t, err)
	defer func() { _ = p.RTCDestroyProgram(prog) }()
	if err := p.RTCCompileProgram(prog, nil); err != nil {
		log, _ := p.RTCGetProgramLog(prog)
		require.NoError(t, err, "log:\n%s", log)
	}
	_, err = p.RTCGetCode(prog) // the cpu device may compile here
	require.NoError(t, err)
}

// The assertions do hold a compiler to the table: CUDA's values are not AMD's.
func TestLayoutAssertsCatchAnotherPlatformsLayout(t *testing.T) {
	if _, err := amd.SupportedArchs(); errors.Is(err, dl.ErrNotFound) {
		t.Skipf("no ROCm hiprtc here (%v)", err)
	}
	_, log, err := amd.CompileFor("gfx90a", conformance.LayoutAsserts("nvidia"), "layout_asserts.hip", nil)
	require.Error(t, err)
	require.Contains(t, err.Error()+log, "alignof(double4) is 16")
}
