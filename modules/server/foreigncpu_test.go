package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// foreignCPU is the cpu platform with hipsys.ForeignStreams' calls, made with its own
// stream and event calls: a stream created on the platform directly, not through the
// Device, stands for another library's. The cpu platform has none of its own (its memory
// is host memory, which host code reads after a host wait), so the device-side exchange
// (OrderBefore and WaitForeign on the device, and what the Device infers around them)
// would otherwise run only on a GPU; on this wrapper it runs in every test run, on
// streams and events that keep CUDA's rules.
type foreignCPU struct{ hipsys.Platform }

func (p foreignCPU) Unwrap() hipsys.Platform    { return p.Platform }
func (p foreignCPU) OrdersForeignStreams() bool { return true }
func (p foreignCPU) ForeignEventRecord(e hipsys.Event, s hipsys.Stream) error {
	return p.Platform.EventRecord(e, s)
}
func (p foreignCPU) ForeignStreamWaitEvent(s hipsys.Stream, e hipsys.Event) error {
	return p.Platform.StreamWaitEvent(s, e, 0)
}
func (p foreignCPU) ForeignStreamQuery(s hipsys.Stream) error { return p.Platform.StreamQuery(s) }

var _ hipsys.ForeignStreams = foreignCPU{}

// openForeignDevice is openDevice's Device on the platform, with foreign streams: on
// the cpu platform through foreignCPU, elsewhere the platform's own.
func openForeignDevice(t testing.TB, opts server.Options) (*server.Device, *faults.Platform) {
	t.Helper()
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	if p.Name() == "cpu" {
		p = foreignCPU{p}
	}
	return openDeviceOn(t, p, opts)
}
