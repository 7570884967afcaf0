package nvidia

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
)

// requireStatus checks that err is a hipsys.Error of call with status st.
func requireStatus(t *testing.T, err error, call string, st hipsys.Status) {
	t.Helper()
	var he *hipsys.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, st, he.Status)
	assert.Equal(t, call, he.Call)
}

// FuncGetParams over the fake cuFuncGetParamInfo, asked when the function is handed
// out: every parameter the driver reports, in order, as ParamUnknown; the driver's
// errors; and a driver without the query.
func TestFuncGetParamsOnTheFakeDriver(t *testing.T) {
	p := &Platform{}
	old := swapParamInfoEntry(rawdriver.FakeParamInfoEntry())
	defer swapParamInfoEntry(old)
	rawdriver.FakeReset(refused, 0)

	layout := []rawdriver.FakeParam{{Offset: 0, Size: 8}, {Offset: 8, Size: 4}, {Offset: 16, Size: 8}, {Offset: 24, Size: 24}}
	require.NoError(t, rawdriver.FakeSetParams(layout))
	p.functions.put(newKernelFunc(fnA, 0, "a", nil))
	got, err := p.FuncGetParams(hipsys.Function(fnA))
	require.NoError(t, err)
	require.Len(t, got, len(layout))
	for i, l := range layout {
		assert.Equal(t, hipsys.KernelParam{Offset: uint32(l.Offset), Size: uint32(l.Size), Kind: hipsys.ParamUnknown}, got[i], "parameter %d", i)
	}
	got[0].Size = 99
	again, err := p.FuncGetParams(hipsys.Function(fnA))
	require.NoError(t, err)
	assert.Equal(t, uint32(8), again[0].Size, "the caller's slice is its own")

	require.NoError(t, rawdriver.FakeSetParams(nil))
	p.functions.put(newKernelFunc(fnB, 0, "b", nil))
	got, err = p.FuncGetParams(hipsys.Function(fnB))
	require.NoError(t, err)
	assert.Empty(t, got, "a kernel without parameters")

	p.functions.put(newKernelFunc(refused, 0, "r", nil))
	_, err = p.FuncGetParams(hipsys.Function(refused))
	requireStatus(t, err, "hipFuncGetParams", hipsys.ErrorInvalidContext)
	assert.ErrorContains(t, err, "CUDA_ERROR_INVALID_CONTEXT")

	_, err = p.FuncGetParams(hipsys.Function(0x1234))
	requireStatus(t, err, "hipFuncGetParams", hipsys.ErrorInvalidHandle)

	swapParamInfoEntry(nil) // a driver older than CUDA 12.4
	p.functions.put(newKernelFunc(fnA, 0, "a", nil))
	_, err = p.FuncGetParams(hipsys.Function(fnA))
	requireStatus(t, err, "hipFuncGetParams", hipsys.ErrorNotSupported)
	assert.ErrorContains(t, err, "cuFuncGetParamInfo")
}

// mixedParams has a parameter of each kind a launch passes: pointers, 32-bit and 8-bit
// integers, a double and a struct, in an order that puts padding before the double and
// after the char.
const mixedParams = `#include <hip/hip_runtime.h>
struct triple { char c; double d; int i; };
extern "C" __global__ void mixed(float* a, int n, double x, triple s, char c, int* b) {
	if (threadIdx.x == 0) b[0] = n + (int)x + s.i + c + (int)a[0];
}
`

// On the GPU: the driver's layout of a kernel with mixed parameters is the C ABI's, each
// parameter aligned to its own size (the struct to its double).
func TestFuncGetParamsOnTheDevice(t *testing.T) {
	p := device(t)
	f := fn(t, p, compile(t, p, mixedParams), "mixed")
	got, err := p.FuncGetParams(f)
	var he *hipsys.Error
	if errors.As(err, &he) && he.Status == hipsys.ErrorNotSupported {
		t.Skipf("this driver predates cuFuncGetParamInfo (CUDA 12.4): %v", err)
	}
	require.NoError(t, err)
	u := hipsys.ParamUnknown
	assert.Equal(t, []hipsys.KernelParam{
		{Offset: 0, Size: 8, Kind: u},   // float* a
		{Offset: 8, Size: 4, Kind: u},   // int n
		{Offset: 16, Size: 8, Kind: u},  // double x
		{Offset: 24, Size: 24, Kind: u}, // triple s
		{Offset: 48, Size: 1, Kind: u},  // char c
		{Offset: 56, Size: 8, Kind: u},  // int* b
	}, got)
}
