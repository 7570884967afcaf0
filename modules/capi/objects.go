package main

import (
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/server"
)

// The objects behind the handles. Each knows its device, so that closing a device
// invalidates every handle it made (device.close sweeps them out of the registry).
type (
	device struct {
		d    *server.Device
		id   uint64
		caps captures
		trim trimmer
	}
	buffer struct {
		dev *device
		b   *server.Buffer
		// dtype is the element type the buffer was allocated with
		// (cubehip_buffer_alloc_typed; 0 for an untyped one): a launch passes a typed
		// buffer through the Device's check of the declared pointee.
		dtype int32
		// addr is the buffer's device address once a raw pointer's lookup
		// (bufferAt) has asked for it, 0 before: a live buffer's address never changes.
		addr atomic.Uint64
	}
	kernel struct {
		dev *device
		k   *server.Kernel
		io  []server.Access // the access of each buffer parameter, as the host declared it or the declaration says
		// inferred: io was read from the entry's declaration (desc.access was NULL), so
		// a launch whose buffers it does not count says why, rather than the Device's
		// count of an IO the host never gave.
		inferred bool
		entry    string
		code     bool // a kernel of a module of compiled code: nothing to infer io from

		mu  sync.Mutex // guards what follows
		log string     // the compiler's log of the last failed compile
		// typed is the buffer types (by argument; 0: none) of the last launch that
		// passed the Device's element-type check, typedOK whether there was one: a launch
		// repeating them needs no check again (launchScratch.checked).
		typed   []int32
		typedOK bool
	}
	graph struct {
		dev *device
		g   *server.Graph
	}
	profile struct {
		dev *device
		p   *server.Profile
	}
	module struct {
		dev *device
		m   *server.Module

		mu  sync.Mutex // guards log
		log string     // the compiler's log of the last failed compile
	}
)

func ownerOf(obj any) *device {
	switch o := obj.(type) {
	case *buffer:
		return o.dev
	case *kernel:
		return o.dev
	case *graph:
		return o.dev
	case *profile:
		return o.dev
	case *module:
		return o.dev
	}
	return nil
}

func lookup[T any](id uint64, k kind) (T, error) {
	var zero T
	obj, ok := handles.get(id, k)
	if !ok {
		return zero, handleError{k: k, id: id}
	}
	return obj.(T), nil
}
