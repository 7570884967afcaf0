package amd

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// The installed ROCm has hipFuncGetAttribute (ROCm 5.2 exports it), and the attribute
// calls refuse a function the platform did not hand out, without a GPU.
func TestInstalledRuntimeFuncAttributeSymbols(t *testing.T) {
	p, err := Open()
	if errors.Is(err, dl.ErrNotFound) {
		t.Skipf("no ROCm installed: %v", err)
	}
	require.NoError(t, err)
	assert.NotNil(t, p.lib.s.funcGetAttribute)
	_, err = p.FuncGetAttribute(0x5eed0000, hipsys.FuncAttributeNumRegs)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	assert.ErrorContains(t, err, "hipFuncGetAttribute")
	err = p.FuncSetAttribute(0x5eed0000, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, 0)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
	assert.ErrorContains(t, err, "hipFuncSetAttribute")
}
