package main

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/server"
)

// captures is a device's open C captures, by device stream. The Device spreads stream ids
// over its device streams (id mod max_streams), and a capture records its device stream's
// work whatever id queued it: a launch on id 5 would land, silently, in the graph id 1
// began when both share a device stream. So the C ABI keeps which id began each capture
// and refuses work on the stream from any other id, naming both.
//
// It also keeps a write refused inside a capture (see refuseWrite), so that the capture
// ends refused, as a recording in which work failed does.
type captures struct {
	open    atomic.Int32 // captures open: 0 keeps every call's check to one atomic load
	mu      sync.Mutex
	streams uint64              // the device streams ids are spread over
	bySlot  map[uint64]*capture // guarded by mu
}

type capture struct {
	id      uint64 // the stream id cubehip_capture_begin was given
	refused error  // why the capture ends refused, when work inside it was refused
}

func (c *captures) slot(id uint64) uint64 { return id % c.streams }

// current is the capture open on id's device stream, or nil.
func (c *captures) current(id uint64) *capture {
	if c.open.Load() == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bySlot[c.slot(id)]
}

// check refuses call's work on stream id while another id's capture records its device
// stream.
func (c *captures) check(id uint64, call string) error {
	if cp := c.current(id); cp != nil && cp.id != id {
		return c.sharedError(call, id, cp.id)
	}
	return nil
}

func (c *captures) sharedError(call string, id, capturing uint64) error {
	return argError(fmt.Sprintf("%s: stream %d shares its device stream with stream %d, which is capturing "+
		"(ids are spread over %d device streams, id mod %d): its work would be recorded into stream %d's graph; "+
		"use stream %d, or another stream, until cubehip_capture_end", call, id, capturing, c.streams, c.streams, capturing, capturing))
}

// refuseWrite is a write of call into the capture on stream id: a graph's copy from host
// memory needs host memory the graph owns for every replay, staged from pools that grew
// before the recording began, and the C ABI has no run before the recording to grow them
// in. The write is refused at the call, and the capture ends refused with its reason.
func (c *captures) refuseWrite(id uint64, call string) error {
	cp := c.current(id)
	if cp == nil {
		return nil
	}
	if cp.id != id {
		return c.sharedError(call, id, cp.id)
	}
	err := refusal(fmt.Sprintf("%s: stream %d is capturing: a write from host memory cannot be recorded into a graph "+
		"(write the buffer before cubehip_capture_begin, or between replays); the capture ends refused", call, id))
	c.mu.Lock()
	if cp.refused == nil {
		cp.refused = err
	}
	c.mu.Unlock()
	return err
}

// begin records that id began a capture, or refuses it where another id's capture
// records the device stream.
func (c *captures) begin(id uint64, start func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cp := c.bySlot[c.slot(id)]; cp != nil {
		if cp.id != id {
			return c.sharedError("cubehip_capture_begin", id, cp.id)
		}
		return argError(fmt.Sprintf("cubehip_capture_begin: stream %d is already capturing (cubehip_capture_end first)", id))
	}
	if err := start(); err != nil {
		return err
	}
	if c.bySlot == nil {
		c.bySlot = make(map[uint64]*capture)
	}
	c.bySlot[c.slot(id)] = &capture{id: id}
	c.open.Add(1)
	return nil
}

// end takes id's capture out of the table: the capture it began, nil when none is open on
// id's device stream, or an error when another id began it.
func (c *captures) end(id uint64) (*capture, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.bySlot[c.slot(id)]
	switch {
	case cp == nil:
		return nil, argError(fmt.Sprintf("cubehip_capture_end: stream %d has no capture open (cubehip_capture_begin first)", id))
	case cp.id != id:
		return nil, c.sharedError("cubehip_capture_end", id, cp.id)
	}
	delete(c.bySlot, c.slot(id))
	c.open.Add(-1)
	return cp, nil
}

// refusal is work inside a capture that was refused, or a capture that ended refused:
// CUBEHIP_ERROR_CAPTURE_REFUSED.
type refusal string

func (e refusal) Error() string { return string(e) }

// captureFailed is a capture whose recorded work failed (or that the device refused to
// end): CUBEHIP_ERROR_CAPTURE_REFUSED, the Device's reason wrapped.
type captureFailed struct {
	id  uint64
	err error
}

func (e captureFailed) Error() string {
	return fmt.Sprintf("cubehip_capture_end: stream %d: the capture is refused: %v", e.id, e.err)
}
func (e captureFailed) Unwrap() error { return e.err }

// stream is the Device's stream id, after the capture check.
func (dev *device) stream(id uint64, call string) (server.Stream, error) {
	if err := dev.caps.check(id, call); err != nil {
		return server.Stream{}, err
	}
	return dev.d.On(server.StreamID(id)), nil
}
