package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -I${SRCDIR}
#include "capi.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Traces: a Chrome trace of a device's launches, copies, replays and compiles
// (server.Device.StartTrace). $CUBEHIP_TRACE opens one at cubehip_device_open, written
// by cubehip_device_close; a host that exits without closing its device writes it with
// cubehip_trace_flush.

//export cubehip_trace_start
func cubehip_trace_start(h C.cubehip_device) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	return result(dev.d.StartTrace())
}

//export cubehip_trace_stop
func cubehip_trace_stop(h C.cubehip_device, path *C.capi_cchar) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	if path == nil {
		return fail(argError("cubehip_trace_stop: path is NULL"))
	}
	p := goString(path)
	if p == "" {
		return fail(argError("cubehip_trace_stop: path is empty"))
	}
	// The file is made before the trace ends, so that a path that cannot take it leaves
	// the trace open for another try; it is written beside the path and renamed over it,
	// so that the path never holds half a trace.
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return fail(argError(fmt.Sprintf("cubehip_trace_stop: cannot write %s: %v (the trace stays open)", p, unwrapPath(err))))
	}
	w := &countingWriter{f: f}
	serr := dev.d.StopTrace(w)
	cerr := f.Close()
	if w.n == 0 {
		// StopTrace wrote nothing: no trace was open, or the device is closed.
		_ = os.Remove(f.Name())
		return fail(errors.Join(serr, cerr))
	}
	if err := errors.Join(cerr, os.Rename(f.Name(), p)); err != nil {
		_ = os.Remove(f.Name())
		return fail(fmt.Errorf("cubehip_trace_stop: write %s: %w", p, err))
	}
	return result(serr)
}

//export cubehip_trace_flush
func cubehip_trace_flush(h C.cubehip_device) C.cubehip_status {
	dev, err := lookup[*device](uint64(h.id), kindDevice)
	if err != nil {
		return fail(err)
	}
	return result(dev.d.FlushTrace())
}

// countingWriter is the trace's file, counting what was written to it.
type countingWriter struct {
	f *os.File
	n int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.n += n
	return n, err
}

// unwrapPath is an *os.PathError's reason alone: the message names the path the host
// gave, not the temporary file's name.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
