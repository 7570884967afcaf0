package jit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// Each kernel's parameters come back in declaration order at the offsets the C++ ABI
// gives them (aligned to their type), with pointers told apart from values.
func TestFunctionParamsLayout(t *testing.T) {
	const src = `
struct Pair { double a; int b; };            // 16 bytes, aligned to 8
struct Tiny { char c[3]; };                  // 3 bytes, aligned to 1
extern "C" __global__ void ptrs(const float* a, float* __restrict__ b) { b[0] = a[0]; }
extern "C" __global__ void mixed(int n, double d, char c, float* out) { if (n) out[0] = d + c; }
extern "C" __global__ void structs(Tiny t, Pair p, short s, long long* out) { out[0] = p.b + t.c[0] + s; }
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) { int i = threadIdx.x; if (i < n) y[i] += a * x[i]; }
extern "C" __global__ void none() {}
`
	m := load(t, src)
	ptr, val := hipsys.ParamPointer, hipsys.ParamValue
	cases := map[string][]hipsys.KernelParam{
		"ptrs":    {{Offset: 0, Size: 8, Kind: ptr}, {Offset: 8, Size: 8, Kind: ptr}},
		"mixed":   {{Offset: 0, Size: 4, Kind: val}, {Offset: 8, Size: 8, Kind: val}, {Offset: 16, Size: 1, Kind: val}, {Offset: 24, Size: 8, Kind: ptr}},
		"structs": {{Offset: 0, Size: 3, Kind: val}, {Offset: 8, Size: 16, Kind: val}, {Offset: 24, Size: 2, Kind: val}, {Offset: 32, Size: 8, Kind: ptr}},
		"saxpy":   {{Offset: 0, Size: 4, Kind: val}, {Offset: 4, Size: 4, Kind: val}, {Offset: 8, Size: 8, Kind: ptr}, {Offset: 16, Size: 8, Kind: ptr}},
		"none":    {},
	}
	for name, want := range cases {
		got := function(t, m, name).Params()
		require.Equal(t, want, append([]hipsys.KernelParam{}, got...), name)
	}
	// The slice is a copy: changing it does not change what the next caller sees.
	f := function(t, m, "saxpy")
	f.Params()[0].Size = 99
	require.Equal(t, uint32(4), f.Params()[0].Size)
}
