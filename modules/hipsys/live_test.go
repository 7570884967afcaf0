package hipsys

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLiveCounts(t *testing.T) {
	before := LiveCounts{Streams: 1, DeviceAllocs: 2, DeviceBytes: 512}
	after := LiveCounts{Streams: 3, Events: 1, DeviceAllocs: 2, DeviceBytes: 512, HostAllocs: 1, HostBytes: 64,
		Modules: 1, Graphs: 1, GraphExecs: 2, Programs: 1}
	left := after.Sub(before)
	assert.Equal(t, LiveCounts{Streams: 2, Events: 1, HostAllocs: 1, HostBytes: 64, Modules: 1, Graphs: 1, GraphExecs: 2, Programs: 1}, left)
	assert.False(t, left.IsZero())
	assert.Equal(t, "2 streams, 1 event, 1 pinned host allocation, 1 module, 1 graph, 2 graph execs, 1 program, 64 pinned host bytes", left.String())
	assert.True(t, after.Sub(after).IsZero())
	assert.Equal(t, "nothing", LiveCounts{}.String())
	assert.Equal(t, "-1 device allocation, -256 device bytes", LiveCounts{}.Sub(LiveCounts{DeviceAllocs: 1, DeviceBytes: 256}).String(),
		"more freed than allocated reads as a negative count, not a huge one")
}
