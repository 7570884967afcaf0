package cpu

import "github.com/cubehip/cubehip/modules/hipsys"

var _ hipsys.LiveCounter = (*Platform)(nil)

// Live counts the objects the platform has handed out and not taken back, for leak
// tests: streams (not the null stream), events, device and pinned allocations with their
// sizes, loaded modules, graphs, executable graphs and hiprtc programs. A destroyed
// stream is not counted even while its worker finishes the work queued before the
// destroy; DeviceSynchronize waits for those workers.
func (p *Platform) Live() hipsys.LiveCounts {
	c := hipsys.LiveCounts{
		Streams:    p.streams.len(),
		Events:     p.events.len(),
		Modules:    p.modules.len(),
		Graphs:     p.graphs.len(),
		GraphExecs: p.execs.len(),
		Programs:   p.programs.len(),
		Imports:    p.imports.live(),
	}
	c.DeviceAllocs, c.DeviceBytes = p.device.live()
	c.HostAllocs, c.HostBytes = p.host.live()
	return c
}
