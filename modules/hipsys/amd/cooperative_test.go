package amd

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// A cooperative launch reaches hipModuleLaunchCooperativeKernel with its arguments, and
// HIP's refusal of a grid too large comes back as its status; the occupancy query reaches
// hipModuleOccupancyMaxActiveBlocksPerMultiprocessor.
func TestCooperativeLaunchThroughTheLibrary(t *testing.T) {
	p := fakePlatform(t, "-DCOOPERATIVE")
	m, err := p.ModuleLoadData(fakeCodeObject())
	require.NoError(t, err)
	defer p.ModuleUnload(m)
	fn, err := p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	out, err := p.Malloc(4)
	require.NoError(t, err)
	defer p.Free(out)

	var args hipsys.KernelArgs
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, p.ModuleLaunchCooperativeKernel(fn, hipsys.Dim3{X: 8, Y: 1, Z: 1}, one, 0, 0, args.Reset().Ptr(out).I32(-42)))
	got := make([]byte, 4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, []byte{0xd6, 0xff, 0xff, 0xff}, got)

	err = p.ModuleLaunchCooperativeKernel(fn, hipsys.Dim3{X: 9, Y: 1, Z: 1}, one, 0, 0, args.Reset().Ptr(out).I32(1))
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, hipsys.ErrorCooperativeLaunchTooLarge, he.Status)
	assert.Equal(t, "hipModuleLaunchCooperativeKernel", he.Call)

	n, err := p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, 256, 0)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	n, err = p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, 1024, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// A libamdhip64 without hipModuleLaunchCooperativeKernel (ROCm 5.2) opens, and the call
// is hipErrorNotSupported naming the library's version; nothing is launched.
func TestCooperativeLaunchMissingIsNotSupported(t *testing.T) {
	p := fakePlatform(t)
	require.Nil(t, p.lib.s.moduleLaunchCooperative)
	m, err := p.ModuleLoadData(fakeCodeObject())
	require.NoError(t, err)
	defer p.ModuleUnload(m)
	fn, err := p.ModuleGetFunction(m, "k")
	require.NoError(t, err)
	out, err := p.Malloc(4)
	require.NoError(t, err)
	defer p.Free(out)
	require.NoError(t, p.MemcpyHtoD(out, []byte{1, 2, 3, 4}))
	var args hipsys.KernelArgs
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	err = p.ModuleLaunchCooperativeKernel(fn, one, one, 0, 0, args.Reset().Ptr(out).I32(5))
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, hipsys.ErrorNotSupported, he.Status)
	assert.Equal(t, "hipModuleLaunchCooperativeKernel", he.Call)
	assert.Contains(t, he.Detail, "has no hipModuleLaunchCooperativeKernel")
	got := make([]byte, 4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	assert.Equal(t, []byte{1, 2, 3, 4}, got, "nothing launched")

	n, err := p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, 64, 0)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
}

// Both calls check their function handle first: ROCm would dereference an invented one.
func TestCooperativeCallsCheckTheirHandle(t *testing.T) {
	p := fakePlatform(t, "-DCOOPERATIVE")
	const junk = 0x5eed0000
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	err := p.ModuleLaunchCooperativeKernel(junk, one, one, 0, 0, nil)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	assert.ErrorContains(t, err, "hipModuleLaunchCooperativeKernel")
	_, err = p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(junk, 64, 0)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	assert.ErrorContains(t, err, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor")
}

// The installed ROCm: the occupancy query is one of the calls the platform requires, and
// the cooperative launch is looked up by name (ROCm 5.2 has none), without a GPU.
func TestInstalledRuntimeCooperativeSymbols(t *testing.T) {
	p, err := Open()
	if errors.Is(err, dl.ErrNotFound) {
		t.Skipf("no ROCm installed: %v", err)
	}
	require.NoError(t, err)
	assert.NotNil(t, p.lib.s.moduleOccupancy)
	assert.Equal(t, p.lib.hip.Lookup("hipModuleLaunchCooperativeKernel") != nil, p.lib.s.moduleLaunchCooperative != nil)
	t.Logf("HIP %s: hipModuleLaunchCooperativeKernel present: %v", versionString(p.lib.version), p.lib.s.moduleLaunchCooperative != nil)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	assert.ErrorIs(t, p.ModuleLaunchCooperativeKernel(0x5eed0000, one, one, 0, 0, nil), hipsys.ErrorInvalidHandle)
	_, err = p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(0x5eed0000, 64, 0)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
}
