package hipsys

import (
	"fmt"
	"strings"
)

// LiveCounts is how many objects of each kind a platform has handed out and not yet
// taken back: the figures a leak test compares before and after a piece of work (every
// stream created is destroyed, every allocation freed, ...). Streams counts the streams
// of StreamCreateWithFlags only, not the null stream, which is the device's own.
type LiveCounts struct {
	Streams      int // StreamCreateWithFlags without StreamDestroy
	Events       int // EventCreateWithFlags without EventDestroy
	DeviceAllocs int // Malloc without Free
	HostAllocs   int // HostMalloc without HostFree
	Modules      int // ModuleLoadData without ModuleUnload
	Graphs       int // StreamEndCapture without GraphDestroy
	GraphExecs   int // GraphInstantiate without GraphExecDestroy
	Programs     int // RTCCreateProgram without RTCDestroyProgram
	Imports      int // ImportMemory without ReleaseImportedMemory

	DeviceBytes uint64 // the sizes asked of the live device allocations
	HostBytes   uint64 // the sizes asked of the live pinned host allocations
}

// LiveCounter is a platform that can count its live objects: the cpu platform and the
// fault-injecting wrapper of package faults (which counts what passed through it on any
// platform). Test code type-asserts a Platform to it.
type LiveCounter interface {
	Live() LiveCounts
}

// Sub is c minus before, field by field: what a piece of work left alive.
func (c LiveCounts) Sub(before LiveCounts) LiveCounts {
	return LiveCounts{
		Streams: c.Streams - before.Streams, Events: c.Events - before.Events,
		DeviceAllocs: c.DeviceAllocs - before.DeviceAllocs, HostAllocs: c.HostAllocs - before.HostAllocs,
		Modules: c.Modules - before.Modules, Graphs: c.Graphs - before.Graphs,
		GraphExecs: c.GraphExecs - before.GraphExecs, Programs: c.Programs - before.Programs,
		Imports:     c.Imports - before.Imports,
		DeviceBytes: c.DeviceBytes - before.DeviceBytes, HostBytes: c.HostBytes - before.HostBytes,
	}
}

// IsZero reports whether nothing is alive (or, for a difference, nothing was left).
func (c LiveCounts) IsZero() bool { return c == LiveCounts{} }

// String lists the kinds with a nonzero count ("2 streams, 1 device allocation of 4096
// bytes"), or "nothing" when there are none, for a leak test's failure message.
func (c LiveCounts) String() string {
	var parts []string
	add := func(n int, what string) {
		if n != 0 {
			s := ""
			if n != 1 && n != -1 {
				s = "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s%s", n, what, s))
		}
	}
	add(c.Streams, "stream")
	add(c.Events, "event")
	add(c.DeviceAllocs, "device allocation")
	add(c.HostAllocs, "pinned host allocation")
	add(c.Modules, "module")
	add(c.Graphs, "graph")
	add(c.GraphExecs, "graph exec")
	add(c.Programs, "program")
	add(c.Imports, "imported range")
	if c.DeviceBytes != 0 {
		parts = append(parts, fmt.Sprintf("%d device bytes", int64(c.DeviceBytes)))
	}
	if c.HostBytes != 0 {
		parts = append(parts, fmt.Sprintf("%d pinned host bytes", int64(c.HostBytes)))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
