package jit

import (
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
