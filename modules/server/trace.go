package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// EnvTrace names a file: a Device opened while it is set traces everything it does and
// writes the trace there when it closes (or at FlushTrace), so that any program can be
// traced unchanged.
const EnvTrace = "CUBEHIP_TRACE"

// tracer is an open trace: what it recorded, where Close writes it, and the lock a
// write holds while it waits for the marks, so that StopTrace gives none of them back
// to the pool under a FlushTrace still reading them.
type tracer struct {
	traceData
	path    string // where Close writes the trace ($CUBEHIP_TRACE), "" for StopTrace's caller
	writing sync.Mutex
	ended   bool // under writing: the final write gave the marks back
}

// traceData is what a trace recorded: the origin mark every device timestamp is
// measured from, a span per operation, bracketed by marks the device stamps as it
// reaches them, and the kernels compiled, timed on the host from host, the host's clock
// when the origin was recorded.
type traceData struct {
	origin   hipsys.Event
	host     time.Time
	spans    []span
	compiles []compute.KernelLoad
}

type span struct {
	name, cat  string
	stream     StreamID
	start, end hipsys.Event
}

// StartTrace starts recording the device time of every launch, copy and replay, on every
// stream, and every kernel compiled or loaded from the disk cache, until StopTrace. Each
// operation costs two event records while a trace is open (none otherwise). Work inside
// a capture window is traced by its replays. Compiles are host work: they are timed on
// the host's clock from the call that opened the trace, on a row of their own.
func (d *Device) StartTrace() error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.startTrace("")
}

func (d *Device) startTrace(path string) error {
	if d.trace != nil {
		return fmt.Errorf("trace: %w: a trace is already open", ErrInvalidArgument)
	}
	origin, ok, err := d.srv.TraceMark(0)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("trace: %w: stream 0 is recording a capture", ErrInvalidArgument)
	}
	d.trace = &tracer{traceData: traceData{origin: origin, host: time.Now()}, path: path}
	d.srv.ObserveLoads(d.traceLoad)
	return nil
}

// traceLoad records a kernel load (d.mu held: the server calls it from a load).
func (d *Device) traceLoad(l compute.KernelLoad) {
	if d.trace != nil {
		d.trace.compiles = append(d.trace.compiles, l)
	}
}

// StopTrace ends the trace StartTrace opened, waits for the device to reach its last
// operation (outside the device's lock) and writes the trace to w as Chrome trace JSON,
// which Perfetto (ui.perfetto.dev) and chrome://tracing open: one slice per launch
// (named by its kernel), write, read and replay, on a row per stream, in device time,
// and one per kernel compiled (named by its entry point, with "source": "compiler" or
// "disk cache") on the row "compiles (host clock)".
func (d *Device) StopTrace(w io.Writer) error {
	if err := d.enter(); err != nil {
		return err
	}
	t := d.trace
	d.trace = nil
	if t == nil {
		d.leave()
		return fmt.Errorf("trace: %w: no trace is open", ErrInvalidArgument)
	}
	d.srv.ObserveLoads(nil)
	d.unlockToWait()
	defer d.exit()
	return d.writeTrace(w, t)
}

// FlushTrace writes the trace $CUBEHIP_TRACE opened to its file now, with everything
// recorded so far, and goes on tracing: a later FlushTrace, or Close, writes the file
// again with all of it. It is for a program that ends without closing the device (a C
// host that exits, a Python script's default device). The file is replaced whole (a
// reader never sees half a trace). With no such trace open (the variable was not set,
// or StopTrace ended it) it does nothing and returns nil, so a program may call it
// unconditionally.
func (d *Device) FlushTrace() error {
	if err := d.enter(); err != nil {
		return err
	}
	t := d.trace
	if t == nil || t.path == "" {
		d.leave()
		return nil
	}
	// The spans so far, capped: later operations append past the copy's end, into
	// memory the copy never reads, or into a new array.
	data := t.traceData
	data.spans = data.spans[:len(data.spans):len(data.spans)]
	data.compiles = data.compiles[:len(data.compiles):len(data.compiles)]
	d.unlockToWait()
	defer d.exit()
	t.writing.Lock()
	defer t.writing.Unlock()
	if t.ended {
		return nil // StopTrace ended it since, and wrote it
	}
	return writeFileWhole(t.path, func(w io.Writer) error { return d.encodeTrace(w, &data) })
}

// traceBegin is the start mark of an operation on stream id (d.mu held); ok is false
// when no trace is open or the stream cannot be marked.
func (d *Device) traceBegin(id StreamID) (hipsys.Event, bool) {
	if d.trace == nil {
		return 0, false
	}
	ev, ok, err := d.srv.TraceMark(id)
	if err != nil || !ok {
		return 0, false
	}
	return ev, true
}

// traceEnd closes the span an operation opened with traceBegin (d.mu held).
func (d *Device) traceEnd(id StreamID, cat, name string, start hipsys.Event) {
	if d.trace == nil {
		d.srv.TraceRelease(start)
		return
	}
	end, ok, err := d.srv.TraceMark(id)
	if err != nil || !ok {
		d.srv.TraceRelease(start)
		return
	}
	d.trace.spans = append(d.trace.spans, span{name: name, cat: cat, stream: id, start: start, end: end})
}

// traceEndAfterWait is traceEnd for a call that waited outside the lock: the end mark
// goes where the stream is once the copy is done.
func (d *Device) traceEndAfterWait(id StreamID, cat, name string, start hipsys.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // Close released the pool with the device
	}
	d.traceEnd(id, cat, name, start)
}

// traceEvent is one Chrome trace event: a complete slice ("X") or metadata ("M").
type traceEvent struct {
	Name string            `json:"name"`
	Cat  string            `json:"cat,omitempty"`
	Ph   string            `json:"ph"`
	Ts   float64           `json:"ts"`            // µs from the trace's start
	Dur  float64           `json:"dur,omitempty"` // µs
	Pid  int               `json:"pid"`
	Tid  int64             `json:"tid"`
	Args map[string]string `json:"args,omitempty"`
}

// compilesRow is the trace's row of compiles: no stream has its id (a stream id is
// written as a signed number, and only an id of 2^64-1 would be -1).
const compilesRow = -1

// writeTrace waits for t's marks, writes t as Chrome trace JSON and releases the marks.
func (d *Device) writeTrace(w io.Writer, t *tracer) error {
	t.writing.Lock() // a FlushTrace still reading the marks finishes first
	defer t.writing.Unlock()
	t.ended = true
	defer func() {
		for _, s := range t.spans {
			d.srv.TraceRelease(s.start, s.end)
		}
		d.srv.TraceRelease(t.origin)
	}()
	return d.encodeTrace(w, &t.traceData)
}

// encodeTrace waits for t's marks and writes t as Chrome trace JSON.
func (d *Device) encodeTrace(w io.Writer, t *traceData) error {
	events := []traceEvent{{Name: "process_name", Ph: "M", Pid: d.index,
		Args: map[string]string{"name": fmt.Sprintf("cubehip %s device %d", d.Platform(), d.index)}}}
	named := map[StreamID]bool{}
	var errs []error
	for _, s := range t.spans {
		from, err1 := d.srv.TraceSince(t.origin, s.start)
		to, err2 := d.srv.TraceSince(t.origin, s.end)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", s.cat, s.name, err))
			continue
		}
		if !named[s.stream] {
			named[s.stream] = true
			events = append(events, traceEvent{Name: "thread_name", Ph: "M", Pid: d.index, Tid: int64(s.stream),
				Args: map[string]string{"name": fmt.Sprintf("stream %d", s.stream)}})
		}
		events = append(events, traceEvent{Name: s.name, Cat: s.cat, Ph: "X", Pid: d.index, Tid: int64(s.stream),
			Ts: float64(from.Nanoseconds()) / 1e3, Dur: float64(max(to-from, 0).Nanoseconds()) / 1e3})
	}
	for i, c := range t.compiles {
		if i == 0 {
			events = append(events, traceEvent{Name: "thread_name", Ph: "M", Pid: d.index, Tid: compilesRow,
				Args: map[string]string{"name": "compiles (host clock)"}})
		}
		args := map[string]string{"source": "compiler"}
		if c.Cached {
			args["source"] = "disk cache"
		}
		if c.Err != nil {
			args["error"] = c.Err.Error()
		}
		events = append(events, traceEvent{Name: c.Entry, Cat: "compile", Ph: "X", Pid: d.index, Tid: compilesRow,
			Ts: float64(max(c.Start.Sub(t.host), 0).Nanoseconds()) / 1e3, Dur: float64(c.Took.Nanoseconds()) / 1e3, Args: args})
	}
	enc := json.NewEncoder(w)
	if err := enc.Encode(struct {
		TraceEvents     []traceEvent `json:"traceEvents"`
		DisplayTimeUnit string       `json:"displayTimeUnit"`
	}{events, "ns"}); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// closeTrace writes the trace $CUBEHIP_TRACE opened, from Close (d.mu held, no call in
// progress, the server still open).
func (d *Device) closeTrace() error {
	t := d.trace
	d.trace = nil
	if t == nil {
		return nil
	}
	d.srv.ObserveLoads(nil)
	if t.path == "" {
		d.writeTraceTo(io.Discard, t)
		return nil
	}
	return writeFileWhole(t.path, func(w io.Writer) error { return d.writeTrace(w, t) })
}

func (d *Device) writeTraceTo(w io.Writer, t *tracer) { _ = d.writeTrace(w, t) }

// writeFileWhole writes path through a temporary file beside it, renamed over it once
// written, so that a reader (or a process killed mid-write) never leaves half a trace.
// write runs even when the file cannot be made, into io.Discard, so that a trace's marks
// are given back all the same; the error then names the path.
func writeFileWhole(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		_ = write(io.Discard)
		return fmt.Errorf("trace: %w", err)
	}
	werr := write(f)
	if err := f.Close(); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("trace: %w", errors.Join(werr, err))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("trace: %w", errors.Join(werr, err))
	}
	return werr
}
