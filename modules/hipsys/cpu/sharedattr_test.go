package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A kernel's static shared memory is its SHARED_SIZE_BYTES, and what is left of the
// block's its MAX_DYNAMIC_SHARED_SIZE_BYTES.
func TestFuncAttributeSharedSize(t *testing.T) {
	p := newTest(t)
	prog, err := p.RTCCreateProgram(`extern "C" __global__ void k(int* out) {
	__shared__ int s[1000];
	s[threadIdx.x] = 1;
	out[threadIdx.x] = s[threadIdx.x];
}`, "shared.hip", nil)
	require.NoError(t, err)
	require.NoError(t, p.RTCCompileProgram(prog, nil))
	image, err := p.RTCGetCode(prog)
	require.NoError(t, err)
	require.NoError(t, p.RTCDestroyProgram(prog))
	mod, err := p.ModuleLoadData(image)
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.ModuleUnload(mod)) }()
	f, err := p.ModuleGetFunction(mod, "k")
	require.NoError(t, err)
	size, err := p.FuncGetAttribute(f, hipsys.FuncAttributeSharedSizeBytes)
	require.NoError(t, err)
	assert.Equal(t, 4000, size)
	dyn, err := p.FuncGetAttribute(f, hipsys.FuncAttributeMaxDynamicSharedSizeBytes)
	require.NoError(t, err)
	assert.Equal(t, int(sharedMemPerBlock)-4000, dyn)
	requireStatus(t, p.FuncSetAttribute(f, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, dyn+1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
}
