package faults

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The attribute calls are failed by their HIP names, each alone.
func TestFuncAttributeCallsFailByName(t *testing.T) {
	w := Wrap(&fake{})
	require.True(t, w.Fail("hipFuncSetAttribute", hipsys.ErrorInvalidValue))
	err := w.FuncSetAttribute(1, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, 1024)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.ErrorContains(t, err, "hipFuncSetAttribute")
	assert.Equal(t, 1, w.Calls("hipFuncSetAttribute"))
	require.True(t, w.Fail("hipFuncGetAttribute", hipsys.ErrorInvalidHandle))
	_, err = w.FuncGetAttribute(1, hipsys.FuncAttributeNumRegs)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	assert.ErrorContains(t, err, "hipFuncGetAttribute")
}
