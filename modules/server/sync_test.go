package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A synchronous caller's loop, a launch and a Sync, costs the driver's calls and nothing
// more: one stream synchronization per Sync (no event made, recorded, waited for and
// destroyed), and no allocation.
func TestLaunchSyncIsTheDriversCalls(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(t, d.Launch(devEmpty, one, server.Args{}))
	require.NoError(t, d.Sync())

	calls := []string{"hipStreamSynchronize", "hipEventCreateWithFlags", "hipEventRecord", "hipEventSynchronize", "hipEventDestroy"}
	before := map[string]int{}
	for _, c := range calls {
		before[c] = f.Calls(c)
	}
	const n = 50
	for range n {
		require.NoError(t, d.Launch(devEmpty, one, server.Args{}))
		require.NoError(t, d.Sync())
	}
	assert.Equal(t, before["hipStreamSynchronize"]+n, f.Calls("hipStreamSynchronize"))
	for _, c := range calls[1:] {
		assert.Equal(t, before[c], f.Calls(c), c)
	}

	allocs := testing.AllocsPerRun(200, func() {
		_ = d.Launch(devEmpty, one, server.Args{})
		_ = d.Sync()
	})
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	assert.Zero(t, allocs, "allocations per launch and Sync")
}
