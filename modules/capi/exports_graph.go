package main

/*
#include "capi.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server"
)

//export cubehip_capture_begin
func cubehip_capture_begin(h C.cubehip_device, stream C.uint64_t) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	st := dev.d.On(server.StreamID(stream))
	return result(dev.caps.begin(uint64(stream), func() error {
		if err := st.PrepareCapture(); err != nil {
			return err
		}
		return st.BeginCapture()
	}))
}

//export cubehip_capture_end
func cubehip_capture_end(h C.cubehip_device, stream C.uint64_t, out *C.cubehip_graph) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_capture_end: graph is NULL"))
	}
	out.id = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	cp, err := dev.caps.end(uint64(stream))
	if err != nil {
		return fail(err)
	}
	g, err := dev.d.On(server.StreamID(stream)).EndCapture()
	if cp.refused != nil {
		// A write was refused inside the capture: a graph without it would replay the
		// rest as if it were whole.
		if g != nil {
			_ = g.Destroy()
		}
		return fail(captureFailed{id: uint64(stream), err: cp.refused})
	}
	if err != nil {
		if errors.Is(err, server.ErrClosed) {
			return fail(err)
		}
		return fail(captureFailed{id: uint64(stream), err: err})
	}
	out.id = C.uint64_t(handles.add(kindGraph, &graph{dev: dev, g: g}))
	return success()
}

//export cubehip_graph_replay
func cubehip_graph_replay(h C.cubehip_graph) C.cubehip_status {
	g, err := lookup[*graph](uint64(h.id), kindGraph)
	if err != nil {
		return fail(err)
	}
	return result(g.g.Replay())
}

//export cubehip_graph_destroy
func cubehip_graph_destroy(h C.cubehip_graph) C.cubehip_status {
	obj, ok := handles.remove(uint64(h.id), kindGraph)
	if !ok {
		return fail(handleError{k: kindGraph, id: uint64(h.id)})
	}
	return result(obj.(*graph).g.Destroy())
}

//export cubehip_profile_start
func cubehip_profile_start(h C.cubehip_device, stream C.uint64_t, out *C.cubehip_profile) C.cubehip_status {
	if out == nil {
		return fail(argError("cubehip_profile_start: profile is NULL"))
	}
	out.id = 0
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	st, err := dev.stream(uint64(stream), "cubehip_profile_start")
	if err != nil {
		return fail(err)
	}
	p, err := st.StartProfile()
	if err != nil {
		return fail(err)
	}
	out.id = C.uint64_t(handles.add(kindProfile, &profile{dev: dev, p: p}))
	return success()
}

//export cubehip_profile_stop
func cubehip_profile_stop(h C.cubehip_profile, ns *C.uint64_t) C.cubehip_status {
	if ns == nil {
		return fail(argError("cubehip_profile_stop: nanoseconds is NULL"))
	}
	*ns = 0
	obj, ok := handles.remove(uint64(h.id), kindProfile)
	if !ok {
		return fail(handleError{k: kindProfile, id: uint64(h.id)})
	}
	d, err := obj.(*profile).p.Stop()
	if err != nil {
		return fail(err)
	}
	*ns = C.uint64_t(d.Nanoseconds())
	return success()
}

//export cubehip_profile_abandon
func cubehip_profile_abandon(h C.cubehip_profile) C.cubehip_status {
	obj, ok := handles.remove(uint64(h.id), kindProfile)
	if !ok {
		return fail(handleError{k: kindProfile, id: uint64(h.id)})
	}
	obj.(*profile).p.Abandon()
	return success()
}

//export cubehip_memory_usage_get
func cubehip_memory_usage_get(h C.cubehip_device, usage *C.cubehip_memory_usage) C.cubehip_status {
	if usage == nil {
		return fail(argError("cubehip_memory_usage_get: usage is NULL"))
	}
	if usage.size < C.sizeof_cubehip_memory_usage {
		return fail(argError(fmt.Sprintf("cubehip_memory_usage_get: usage.size is %d: set it to sizeof(cubehip_memory_usage)", usage.size)))
	}
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	u, err := dev.d.MemoryUsage()
	if err != nil {
		return fail(err)
	}
	usage.number_allocs = C.uint64_t(u.NumberAllocs)
	usage.bytes_in_use = C.uint64_t(u.BytesInUse)
	usage.bytes_padding = C.uint64_t(u.BytesPadding)
	usage.bytes_reserved = C.uint64_t(u.BytesReserved)
	return success()
}

//export cubehip_memory_report
func cubehip_memory_report(h C.cubehip_device, buf *C.char, capacity C.size_t, length *C.size_t) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	r, err := dev.d.MemoryReport()
	if err != nil {
		return fail(err)
	}
	js, err := json.Marshal(r)
	if err != nil {
		return fail(err)
	}
	return result(putOut(string(js), buf, capacity, length))
}

//export cubehip_memory_cleanup
func cubehip_memory_cleanup(h C.cubehip_device) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	return result(dev.d.Cleanup())
}

//export cubehip_memory_set_allocation_mode
func cubehip_memory_set_allocation_mode(h C.cubehip_device, stream C.uint64_t, mode C.int32_t) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	var m memory.Mode
	switch mode {
	case C.CUBEHIP_ALLOCATION_AUTO:
		m = memory.ModeAuto
	case C.CUBEHIP_ALLOCATION_PERSISTENT:
		m = memory.ModePersistent
	default:
		return fail(argError(fmt.Sprintf("cubehip_memory_set_allocation_mode: mode %d is neither AUTO nor PERSISTENT", mode)))
	}
	st, err := dev.stream(uint64(stream), "cubehip_memory_set_allocation_mode")
	if err != nil {
		return fail(err)
	}
	return result(st.SetAllocationMode(m))
}
