package amd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// A module variable from hipModuleGetGlobal is device memory to the copy calls (ROCm
// would take an address it never allocated for host memory and write through it, so
// the range check must know the variable) until its module is unloaded; an unknown name
// is HIP's status, naming the symbol.
func TestModuleGetGlobal(t *testing.T) {
	p := fakePlatform(t)
	m, err := p.ModuleLoadData(fakeCodeObject())
	require.NoError(t, err)
	table, size, err := p.ModuleGetGlobal(m, "table")
	require.NoError(t, err)
	require.Equal(t, uint64(64), size)
	again, _, err := p.ModuleGetGlobal(m, "table")
	require.NoError(t, err)
	require.Equal(t, table, again)

	in := []byte("module variables are device memory")
	require.NoError(t, p.MemcpyHtoD(table+8, in))
	out := make([]byte, len(in))
	require.NoError(t, p.MemcpyDtoH(out, table+8))
	assert.Equal(t, in, out)
	assert.ErrorIs(t, p.MemcpyHtoD(table+32, make([]byte, 33)), hipsys.ErrorInvalidValue, "past the variable's end")

	_, _, err = p.ModuleGetGlobal(m, "absent")
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	assert.ErrorContains(t, err, "absent")
	_, _, err = p.ModuleGetGlobal(hipsys.Module(0x1234), "table")
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)

	require.NoError(t, p.ModuleUnload(m))
	assert.ErrorIs(t, p.MemcpyHtoD(table, in), hipsys.ErrorInvalidValue, "the variable went with its module")
}
