package compute

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// Ordering against other libraries' streams, on the device: the exchange of memory
// with CuPy, PyTorch or a C host (DLPack, the CUDA array interface) without a host wait.
//
// Only the platform's foreign-stream calls touch the other library's stream
// (hipsys.ForeignStreams), never the queue watch: the server infers nothing about a
// stream it did not make, and its own streams' states stay as they were, except that a
// stream made to wait for foreign work has had something queued (the watch counts it).
// A fault of the other library's work is the context's: on a GPU every stream of the
// process sees it, so a wait of the server's reports it as for its own work.

// Invariants:
//   - foreignDoneMeansNothingToWait: a foreign stream the driver's query finds complete
//     has no command left whose writes a later command of the server's could overtake,
//     so WaitForeign orders nothing for it. It relies on the query covering every command
//     queued on that stream before the call (the driver's definition of hipStreamQuery),
//     not on anything the server remembers about the stream.
const foreignDoneMeansNothingToWait = true

// foreign is the platform's foreign-stream capability and the server's objects for it,
// made on first use and destroyed at Close.
//
// Two events, one per direction. out is recorded on the server's streams through the
// watch and waited on by foreign streams; in is recorded on foreign streams and waited
// on by the server's through the watch. The watch infers that a wait on the event it
// recorded last orders the waiter after that event's stream (the ledger's OrderedAfter):
// were one event recorded on a foreign stream after the watch recorded it, a wait on it
// would be taken for an order between two of the server's streams that does not exist.
type foreign struct {
	calls   hipsys.ForeignStreams // nil: the platform has none (the cpu platform)
	out, in hipsys.Event          // see above; each reused by every exchange, one at a time
	export  hipsys.Stream         // ExportStream's stream; 0 until asked for
	ids     []StreamID            // OrderBefore's walk of the streams, reused (under the owner's lock)
}

// foreignCalls is the capability, checked once per call: a platform without it (the
// cpu device, whose memory is host memory) is told apart with a clear error.
func (s *Server) foreignCalls(what string) (hipsys.ForeignStreams, error) {
	if s.foreign.calls == nil {
		return nil, fmt.Errorf("%w: %s: the %s platform has no streams of other libraries (its memory is host memory: wait on the host)", ErrInvalidArgument, what, s.base.Name())
	}
	// An event serves every exchange of its direction: a wait takes the record it sees
	// when it is queued, so recording the event again later changes no wait queued.
	for _, ev := range []*hipsys.Event{&s.foreign.out, &s.foreign.in} {
		if *ev == 0 {
			e, err := s.base.EventCreateWithFlags(hipsys.EventDisableTiming)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			*ev = e
		}
	}
	return s.foreign.calls, nil
}

// OrderBefore makes foreign, a stream of another library, wait on the device for every
// write queued so far to the buffers, on whichever of the server's streams it was
// queued: the streams holding their last writes are ordered before stream id (as a
// launch on id would be), an event is recorded there, and foreign waits for it. It does
// not wait on the host. A buffer carrying a failure returns it, and nothing is ordered:
// the other library must not read bytes nothing wrote. A later device fault of the
// ordered work is the context's, seen by the other library's own calls too.
//
// The other library may write the memory, too, and the server orders writes across its
// streams, not reads: a kernel of another of its streams still reading a buffer would
// read their bytes. So every other stream of the server with work not known done is
// ordered before foreign as well, as a library with one stream orders all its earlier
// work before its consumer. (Between the server's own streams such a read is the
// caller's to order; the other library's writes are not the server's to see.) A stream
// recording a capture is left out: its work runs only when the graph is replayed.
func (s *Server) OrderBefore(handles []Binding, id StreamID, foreign hipsys.Stream) error {
	const what = "ordering for another library"
	calls, err := s.foreignCalls(what)
	if err != nil {
		return err
	}
	s.settleQueue()
	if err := s.streams.EnsureWritten(handles...); err != nil {
		return err
	}
	r, err := s.streams.Resolve(id, handles)
	if err != nil {
		return s.explain(err)
	}
	defer r.Close()
	st := r.Stream()
	if st.Capture.IsRecording() {
		return fmt.Errorf("%w: %s: stream %d records a capture, whose work runs only when the graph is replayed", stream.ErrGraphState, what, id)
	}
	if err := s.orderBusyBefore(st, foreign, calls, what); err != nil {
		return err
	}
	s.foreign.ids = s.streams.AppendStreamIDs(s.foreign.ids[:0])
	for _, other := range s.foreign.ids {
		o := s.streams.TryStream(other)
		if o == nil || o == st || o.Capture.IsRecording() {
			continue
		}
		if err := s.orderBusyBefore(o, foreign, calls, what); err != nil {
			return err
		}
	}
	return nil
}

// orderBusyBefore makes foreign wait for what st has queued, unless st has completed
// everything queued on it (on stream id, the waits Resolve just queued for the buffers'
// last writes on other streams included): the direct read's test (read.go), known idle
// (internal/ledger) or else the driver's own query, never a guess. An export of memory
// written long ago then costs no driver call at all, as a library exporting on the
// consumer's own stream does.
func (s *Server) orderBusyBefore(st *stream.Stream, foreign hipsys.Stream, calls hipsys.ForeignStreams, what string) error {
	if s.watch.knownIdle(st.Sys) || s.p.StreamQuery(st.Sys) == nil {
		return nil
	}
	// One event serves every stream: a wait takes the record it sees when it is queued.
	if err := s.watch.EventRecord(s.foreign.out, st.Sys); err != nil {
		return s.explain(fmt.Errorf("%s: %w", what, err))
	}
	if err := calls.ForeignStreamWaitEvent(foreign, s.foreign.out); err != nil {
		return s.explain(fmt.Errorf("%s, its stream %#x: %w", what, uint64(foreign), err))
	}
	return nil
}

// WaitForeign makes stream id wait on the device for everything queued so far on
// foreign, a stream of another library: what that library wrote before handing memory
// over (the CUDA array interface's stream) is then done before the stream's next work.
// It does not wait on the host.
//
// The driver is asked first whether foreign has anything left to run: where it says
// every command queued on it so far has completed (an import of a tensor whose writes
// are done, the common case), there is nothing to wait for and no event is recorded or
// waited on (one driver call instead of two). Any other answer, not ready or an error,
// takes the event's way; the question is the driver's, never an inference of the
// server's (foreignDoneMeansNothingToWait).
func (s *Server) WaitForeign(id StreamID, foreign hipsys.Stream) error {
	const what = "waiting for another library"
	calls, err := s.foreignCalls(what)
	if err != nil {
		return err
	}
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return s.explain(err)
	}
	defer r.Close()
	st := r.Stream()
	if st.Capture.IsRecording() {
		return fmt.Errorf("%w: %s: stream %d records a capture", stream.ErrGraphState, what, id)
	}
	if foreignDoneMeansNothingToWait && calls.ForeignStreamQuery(foreign) == nil {
		return nil
	}
	if err := calls.ForeignEventRecord(s.foreign.in, foreign); err != nil {
		return s.explain(fmt.Errorf("%s, its stream %#x: %w", what, uint64(foreign), err))
	}
	// Through the watch: the stream has work queued now (never taken for idle), and the
	// watch never records in, so no order between the server's own streams is inferred.
	if err := s.watch.StreamWaitEvent(st.Sys, s.foreign.in, 0); err != nil {
		return s.explain(fmt.Errorf("%s: %w", what, err))
	}
	return nil
}

// ExportStream is a stream of the server's that runs none of its own work, for an
// export to name as the stream its consumer waits on (the CUDA array interface's
// "stream"): OrderBefore it, then hand out its handle. Sharing one of the server's
// working streams instead would end every inference about it for the server's life
// (NativeStream). It is made on first use and destroyed at Close.
func (s *Server) ExportStream() (hipsys.Stream, error) {
	const what = "the export stream's creation"
	if _, err := s.foreignCalls(what); err != nil {
		return 0, err
	}
	if s.foreign.export == 0 {
		st, err := s.base.StreamCreateWithFlags(hipsys.StreamNonBlocking)
		if err != nil {
			return 0, s.explain(fmt.Errorf("%s: %w", what, err))
		}
		s.foreign.export = st
	}
	return s.foreign.export, nil
}

// closeForeign destroys the export stream and the event, at Close, after every wait.
func (s *Server) closeForeign() error {
	var err error
	if s.foreign.export != 0 {
		err = s.base.StreamDestroy(s.foreign.export)
		s.foreign.export = 0
	}
	for _, ev := range []*hipsys.Event{&s.foreign.out, &s.foreign.in} {
		if *ev != 0 {
			if e := s.base.EventDestroy(*ev); err == nil {
				err = e
			}
			*ev = 0
		}
	}
	return err
}

// HasForeignStreams reports whether the platform orders work against other libraries'
// streams (OrderBefore, WaitForeign, ExportStream); the cpu platform does not.
func (s *Server) HasForeignStreams() bool { return s.foreign.calls != nil }
