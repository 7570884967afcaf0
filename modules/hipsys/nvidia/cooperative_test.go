package nvidia

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
)

// A cooperative launch is checked as any launch is, named as its own call, before
// anything reaches the driver; the occupancy query checks its handle. (The launch
// itself and the driver's limit need a GPU: the conformance suite's cooperative corpus
// kernel runs them there.)
func TestCooperativeLaunchCheckedBeforeTheDriver(t *testing.T) {
	q, h := fakeQueue(t, 0, 0)
	checkedFunc(t)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	err := q.p.ModuleLaunchCooperativeKernel(hipsys.Function(fnC), one, one, 0, hipsys.NullStream, new(hipsys.KernelArgs).Ptr(0x1000))
	requireStatus(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorInvalidValue)
	assert.ErrorContains(t, err, "kernel k3 takes 3 arguments, got 1")
	err = q.p.ModuleLaunchCooperativeKernel(0x5eed, one, one, 0, hipsys.NullStream, nil)
	requireStatus(t, err, "hipModuleLaunchCooperativeKernel", hipsys.ErrorInvalidHandle)
	_, err = q.p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(0x5eed, 64, 0)
	requireStatus(t, err, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", hipsys.ErrorInvalidHandle)
	_, err = q.p.ModuleOccupancyMaxActiveBlocksPerMultiprocessor(hipsys.Function(fnC), -1, 0)
	requireStatus(t, err, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", hipsys.ErrorInvalidValue)
	require.Empty(t, h.Settle(nil))
	assert.Empty(t, rawdriver.FakeCalls(), "no refused launch reached the driver")
}

// Both entry points are among the driver's required symbols: a driver without them is
// too old for cubehip, as with any other call it makes.
func TestCooperativeEntryPointsResolved(t *testing.T) {
	names := map[string]bool{}
	for _, e := range driverSymbols() {
		names[e.Names[0]] = true
	}
	assert.True(t, names["cuLaunchCooperativeKernel"])
	assert.True(t, names["cuOccupancyMaxActiveBlocksPerMultiprocessor"])
}
