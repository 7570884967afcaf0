package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// FuncGetParams answers from the kernel's compiled signature: fill(float*, float,
// unsigned) is a pointer at 0 and two 4-byte values after it; a kernel without
// parameters has none; a handle that names no function is an error.
func TestFuncGetParams(t *testing.T) {
	p := newTest(t)
	fill, empty := loadKernels(t, p)
	got, err := p.FuncGetParams(fill)
	require.NoError(t, err)
	require.Equal(t, []hipsys.KernelParam{
		{Offset: 0, Size: 8, Kind: hipsys.ParamPointer},
		{Offset: 8, Size: 4, Kind: hipsys.ParamValue},
		{Offset: 12, Size: 4, Kind: hipsys.ParamValue},
	}, got)
	got, err = p.FuncGetParams(empty)
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = p.FuncGetParams(hipsys.Function(12345))
	require.Equal(t, hipsys.ErrorInvalidHandle, hipsys.StatusOf(err))
}
