package amd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
)

// These run on an AMD GPU (the self-hosted ROCm job) and skip elsewhere with HIP's own
// hipErrorNoDevice, which is the legitimate reason on a machine without one.

func TestConformanceOnGPU(t *testing.T) { conformance.Run(t, gpu(t)) }

func TestGPUPropertiesAgreeWithArchitecture(t *testing.T) {
	p := gpu(t)
	d, err := p.GetDeviceProperties(0)
	require.NoError(t, err)
	t.Logf("%s: %s, warp %d, %d CUs, %d MiB", d.Name, d.ArchName, d.WarpSize, d.MultiProcessorCount, d.TotalMem>>20)
	assert.Regexp(t, `^gfx[0-9a-f]+`, d.ArchName)
	assert.NoError(t, amd.CheckWarpSize(d.ArchName, d.WarpSize))
	supported, err := amd.SupportedArchs()
	require.NoError(t, err)
	assert.Contains(t, supported, archBase(d.ArchName), "the compiler supports the device it runs on")
}

// An ahead-of-time code object built for the device's architecture loads and runs.
func TestAheadOfTimeCodeObjectRunsOnGPU(t *testing.T) {
	p := gpu(t)
	d, err := p.GetDeviceProperties(0)
	require.NoError(t, err)
	code, log, err := amd.CompileFor(d.ArchName, `#include <hip/hip_runtime.h>
extern "C" __global__ void iota(int* out) { out[threadIdx.x] = threadIdx.x * 3; }`, "iota.hip", nil)
	require.NoError(t, err, log)
	m, err := p.ModuleLoadData(code)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.ModuleUnload(m)) }()
	fn, err := p.ModuleGetFunction(m, "iota")
	require.NoError(t, err)
	out, err := p.Malloc(64 * 4)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Free(out)) }()
	var args hipsys.KernelArgs
	require.NoError(t, p.ModuleLaunchKernel(fn, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, 0, args.Ptr(out)))
	got := make([]byte, 64*4)
	require.NoError(t, p.MemcpyDtoH(got, out))
	for i := range 64 {
		assert.Equal(t, byte(i*3), got[i*4], "lane %d", i)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = p.ModuleLaunchKernel(fn, hipsys.Dim3{X: 1, Y: 1, Z: 1}, hipsys.Dim3{X: 64, Y: 1, Z: 1}, 0, 0, args.Reset().Ptr(out))
	})
	assert.Zero(t, allocs, "a launch allocates nothing")
	require.NoError(t, p.DeviceSynchronize())
}

func BenchmarkLaunchOnGPU(b *testing.B) {
	p, err := hipsys.Open("amd")
	if err != nil {
		b.Skip(err)
	}
	if _, err := p.GetDeviceCount(); err != nil {
		b.Skip(err)
	}
	d, err := p.GetDeviceProperties(0)
	require.NoError(b, err)
	code, _, err := amd.CompileFor(d.ArchName, `extern "C" __global__ void empty() {}`, "empty.hip", nil)
	require.NoError(b, err)
	m, err := p.ModuleLoadData(code)
	require.NoError(b, err)
	defer p.ModuleUnload(m)
	fn, err := p.ModuleGetFunction(m, "empty")
	require.NoError(b, err)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := p.ModuleLaunchKernel(fn, one, one, 0, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, p.DeviceSynchronize())
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/launch")
}

func archBase(arch string) string {
	for i, c := range arch {
		if c == ':' {
			return arch[:i]
		}
	}
	return arch
}
