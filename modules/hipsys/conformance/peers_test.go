package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/conformance"
	cpuplatform "github.com/cubehip/cubehip/modules/hipsys/cpu"
)

// TestCPUSeveralDevices runs the whole suite on a cpu platform of three devices, so the
// peer copies between devices run too (device 0 is the suite's device).
func TestCPUSeveralDevices(t *testing.T) {
	t.Setenv("CUBEHIP_CPU_DEVICES", "3")
	p, err := cpuplatform.Open()
	require.NoError(t, err)
	conformance.Run(t, p)
}
