package main

import (
	"sync"

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
	}
	kernel struct {
		dev   *device
		k     *server.Kernel
		io    []server.Access // the access of each buffer parameter, as the host declared it
		entry string
		mu    sync.Mutex
		log   string // the compiler's log of the last failed compile
	}
	graph struct {
		dev *device
		g   *server.Graph
	}
	profile struct {
		dev *device
		p   *server.Profile
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
