package jit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// racecheck instruments a module only where its code can reach shared memory.
func TestInstrumentedForLeavesRacecheckWhereNoSharedMemory(t *testing.T) {
	all := hipsys.CheckMemory | hipsys.CheckInit | hipsys.CheckRace
	plain := `extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1; }`
	require.Equal(t, hipsys.CheckMemory|hipsys.CheckInit, instrumentedFor(all, plain, nil, nil))
	require.Equal(t, hipsys.Checks(0), instrumentedFor(hipsys.CheckRace, plain, nil, nil))
	require.Equal(t, hipsys.CheckInit, instrumentedFor(hipsys.CheckInit, plain, nil, nil))
	for _, src := range []string{
		`extern "C" __global__ void k(float* a) { __shared__ float s[4]; s[0] = a[0]; }`,
		`extern "C" __global__ void k(float* a) { extern __shared__ float s[]; s[0] = a[0]; }`,
		`extern "C" __global__ void k(float* a) { HIP_DYNAMIC_SHARED(float, s) s[0] = a[0]; }`,
	} {
		require.Equal(t, all, instrumentedFor(all, src, nil, nil), src)
	}
	require.Equal(t, all, instrumentedFor(all, plain, []header{{name: "tile.h", source: "__shared__ float tile[16];"}}, nil))
	require.Equal(t, all, instrumentedFor(all, plain, nil, []string{"-I/opt/include"}), "headers the jit cannot read")
}

// Under racecheck and synccheck a barrier kernel still runs as regions, unless it calls
// warp functions (whose meetings only fibers show the checker); under racecheck its
// atomics on shared memory stay atomics.
func TestCheckedBarrierKernelsKeepRegions(t *testing.T) {
	modes := func(src string, c hipsys.Checks) (map[string]string, string) {
		p := scan(src)
		p.check(c)
		return modesOf(p), p.rewritten
	}
	const hist = `extern "C" __global__ void k(float* p) {
  __shared__ float s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&s[threadIdx.x % 4], 1.0f);
  __syncthreads();
  if (threadIdx.x < 4) p[threadIdx.x] = s[threadIdx.x];
}`
	for _, c := range []hipsys.Checks{hipsys.CheckRace, hipsys.CheckSync, hipsys.CheckRace | hipsys.CheckSync | hipsys.CheckMemory} {
		m, src := modes(hist, c)
		require.Equal(t, map[string]string{"k": "regions"}, m, c.String())
		require.Contains(t, src, "CUBEHIP_REGION_BARRIER(__LINE__")
		require.Equal(t, c&hipsys.CheckRace != 0, !strings.Contains(src, "plain::atomicAdd"), c.String())
	}
	m, _ := modes(hist, 0)
	require.Equal(t, map[string]string{"k": "regions"}, m)
	const warps = `extern "C" __global__ void k(float* p) {
  __shared__ float s[64];
  float v = p[threadIdx.x];
  v += __shfl_down(v, 1);
  s[threadIdx.x] = v;
  __syncthreads();
  p[threadIdx.x] = s[63 - threadIdx.x];
}`
	m, _ = modes(warps, hipsys.CheckMemory)
	require.Equal(t, map[string]string{"k": "regions"}, m)
	m, _ = modes(warps, hipsys.CheckRace)
	require.Contains(t, m["k"], "fiber: ")
}
