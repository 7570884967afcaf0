package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// EnvTrace names a file: a Device opened while it is set traces everything it does and
// writes the trace there when it closes, so that any program can be traced unchanged.
const EnvTrace = "CUBEHIP_TRACE"

// tracer is an open trace: the origin mark every timestamp is measured from, and a span
// per operation, bracketed by marks the device stamps as it reaches them.
type tracer struct {
	origin hipsys.Event
	spans  []span
	path   string // where Close writes the trace ($CUBEHIP_TRACE), "" for StopTrace's caller
}

type span struct {
	name, cat  string
	stream     StreamID
	start, end hipsys.Event
}

// StartTrace starts recording the device time of every launch, copy and replay, on every
// stream, until StopTrace. Each operation costs two event records while a trace is open
// (none otherwise). Work inside a capture window is traced by its replays.
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
	d.trace = &tracer{origin: origin, path: path}
	return nil
}

// StopTrace ends the trace StartTrace opened, waits for the device to reach its last
// operation (outside the device's lock) and writes the trace to w as Chrome trace JSON,
// which Perfetto (ui.perfetto.dev) and chrome://tracing open: one slice per launch
// (named by its kernel), write, read and replay, on a row per stream, in device time.
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
	d.unlockToWait()
	defer d.exit()
	return d.writeTrace(w, t)
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

// writeTrace waits for t's marks, writes t as Chrome trace JSON and releases the marks.
func (d *Device) writeTrace(w io.Writer, t *tracer) error {
	defer func() {
		for _, s := range t.spans {
			d.srv.TraceRelease(s.start, s.end)
		}
		d.srv.TraceRelease(t.origin)
	}()
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
	if t.path == "" {
		d.writeTraceTo(io.Discard, t)
		return nil
	}
	f, err := os.Create(t.path)
	if err != nil {
		d.writeTraceTo(io.Discard, t)
		return fmt.Errorf("trace: %w", err)
	}
	return errors.Join(d.writeTrace(f, t), f.Close())
}

func (d *Device) writeTraceTo(w io.Writer, t *tracer) { _ = d.writeTrace(w, t) }
