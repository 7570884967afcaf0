package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The cpu device's function attributes: what it knows, the dynamic shared-memory limit
// a launch is held to once set, and the values it refuses.
func TestFuncAttributes(t *testing.T) {
	p := newTest(t)
	_, empty := loadKernels(t, p)
	get := func(a hipsys.FuncAttribute) int {
		v, err := p.FuncGetAttribute(empty, a)
		require.NoError(t, err, a.String())
		return v
	}
	assert.Equal(t, maxThreadsPerBlock, get(hipsys.FuncAttributeMaxThreadsPerBlock))
	assert.Equal(t, int(sharedMemPerBlock), get(hipsys.FuncAttributeMaxDynamicSharedSizeBytes))
	assert.Equal(t, -1, get(hipsys.FuncAttributePreferredSharedMemoryCarveout))
	for _, a := range []hipsys.FuncAttribute{hipsys.FuncAttributeSharedSizeBytes, hipsys.FuncAttributeConstSizeBytes,
		hipsys.FuncAttributeLocalSizeBytes, hipsys.FuncAttributeNumRegs, hipsys.FuncAttributePTXVersion,
		hipsys.FuncAttributeBinaryVersion, hipsys.FuncAttributeCacheModeCA} {
		assert.Zero(t, get(a), a.String())
	}

	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, p.FuncSetAttribute(empty, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, 1024))
	assert.Equal(t, 1024, get(hipsys.FuncAttributeMaxDynamicSharedSizeBytes))
	require.NoError(t, p.ModuleLaunchKernel(empty, one, one, 1024, 0, nil))
	err := p.ModuleLaunchKernel(empty, one, one, 1025, 0, nil)
	requireStatus(t, err, "hipModuleLaunchKernel", hipsys.ErrorInvalidValue)
	assert.ErrorContains(t, err, "MAX_DYNAMIC_SHARED_SIZE_BYTES")
	require.NoError(t, p.FuncSetAttribute(empty, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, int(sharedMemPerBlock)))
	require.NoError(t, p.ModuleLaunchKernel(empty, one, one, sharedMemPerBlock, 0, nil))
	require.NoError(t, p.StreamSynchronize(0))

	requireStatus(t, p.FuncSetAttribute(empty, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, int(sharedMemPerBlock)+1),
		"hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	requireStatus(t, p.FuncSetAttribute(empty, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, -1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	require.NoError(t, p.FuncSetAttribute(empty, hipsys.FuncAttributePreferredSharedMemoryCarveout, 50))
	assert.Equal(t, 50, get(hipsys.FuncAttributePreferredSharedMemoryCarveout))
	requireStatus(t, p.FuncSetAttribute(empty, hipsys.FuncAttributePreferredSharedMemoryCarveout, 101), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	requireStatus(t, p.FuncSetAttribute(empty, hipsys.FuncAttributeNumRegs, 1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	_, err = p.FuncGetAttribute(empty, 42)
	requireStatus(t, err, "hipFuncGetAttribute", hipsys.ErrorInvalidValue)
	_, err = p.FuncGetAttribute(0x5555, hipsys.FuncAttributeNumRegs)
	requireStatus(t, err, "hipFuncGetAttribute", hipsys.ErrorInvalidHandle)
	requireStatus(t, p.FuncSetAttribute(0x5555, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, 0), "hipFuncSetAttribute", hipsys.ErrorInvalidHandle)
}
