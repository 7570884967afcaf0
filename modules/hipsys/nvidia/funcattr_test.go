package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
)

// The attribute calls check the handle, the attribute and what can be set before
// anything reaches the driver (the driver's answers need a GPU: the conformance suite
// reads them there).
func TestFuncAttributeCheckedBeforeTheDriver(t *testing.T) {
	q, h := fakeQueue(t, 0, 0)
	checkedFunc(t)
	_, err := q.p.FuncGetAttribute(0x5eed, hipsys.FuncAttributeNumRegs)
	requireStatus(t, err, "hipFuncGetAttribute", hipsys.ErrorInvalidHandle)
	_, err = q.p.FuncGetAttribute(hipsys.Function(fnC), 42)
	requireStatus(t, err, "hipFuncGetAttribute", hipsys.ErrorInvalidValue)
	requireStatus(t, q.p.FuncSetAttribute(0x5eed, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, 0), "hipFuncSetAttribute", hipsys.ErrorInvalidHandle)
	requireStatus(t, q.p.FuncSetAttribute(hipsys.Function(fnC), hipsys.FuncAttributeNumRegs, 1), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	requireStatus(t, q.p.FuncSetAttribute(hipsys.Function(fnC), hipsys.FuncAttributePreferredSharedMemoryCarveout, 101), "hipFuncSetAttribute", hipsys.ErrorInvalidValue)
	require.Empty(t, h.Settle(nil))
	assert.Empty(t, rawdriver.FakeCalls(), "no refused call reached the driver")
	names := map[string]bool{}
	for _, e := range driverSymbols() {
		names[e.Names[0]] = true
	}
	assert.True(t, names["cuFuncGetAttribute"])
	assert.True(t, names["cuFuncSetAttribute"])
}
