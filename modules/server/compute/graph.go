package compute

import "github.com/cubehip/cubehip/modules/stream"

// GraphPrepare is graph_prepare on stream id: the capture window opens in its prepare
// state, and both memory managers are armed for capture (persistent mode, touched slices
// recorded, warm-up allocations retained), so the warm-up run that must follow grows the
// pools to the whole working set. Refused (stream.ErrGraphState), changing nothing, when
// a capture is already prepared or recording.
func (s *Server) GraphPrepare(id StreamID) error {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Stream().PrepareCapture()
}

// BeginCapture is begin_capture on stream id: prepare → recording, the last host waits
// (two drop-queue flushes), priming ended, hipStreamBeginCapture. Refused without side
// effects outside the prepare state; if the driver refuses, the stream returns to no
// capture and may be prepared again.
func (s *Server) BeginCapture(id StreamID) error {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Stream().BeginCapture()
}

// EndCapture is end_capture on stream id: the capture is sealed and instantiated under a
// fresh graph id. A refused capture (not recording, a driver failure, or a graph with
// memory nodes: an allocation inside the window, which would fail on its second replay)
// leaves every buffer the recorded launches were given carrying the refusal, since they
// will now never be written by it, and returns the refusal.
func (s *Server) EndCapture(id StreamID) (GraphID, error) {
	s.settleQueue()
	r, err := s.streams.Resolve(id, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	gid := stream.NewGraphID()
	g, refused := r.Stream().Instantiate(gid)
	if refused != nil {
		// Failed directly, without the failure hook, as CubeCL does: the caller gets
		// the error itself, and a read on another stream gets it from the buffers.
		s.streams.Taint(refused.Err, refused.Written...)
		return 0, refused.Err
	}
	s.graphs.Insert(gid, r.Stream(), g)
	if s.owners == nil {
		s.owners = make(map[GraphID]StreamID)
	}
	s.owners[gid] = id
	return gid, nil
}

// Replay launches graph on stream id in a write scope over the buffers its replays
// write, and returns at enqueue time. A failure leaves that set carrying it, and the
// next successful replay releases it: the graph retains those buffers, so nothing else
// could ever free or rewrite them, and without that settle one transient failure would
// make them unreadable forever. An unknown graph is stream.ErrUnknownGraph.
//
// A replay takes part in cross-stream order exactly as a launch does: it is ordered on
// the device after the last write of every buffer its recorded work uses, whichever
// stream made it, and its outputs become those buffers' last writes. A buffer it only
// reads that carries a failure refuses the replay, and the outputs take that failure,
// since the graph would compute them from bytes nothing wrote. Differs from CubeCL,
// whose replay resolves no buffer.
func (s *Server) Replay(graph GraphID, id StreamID) error {
	s.settleQueue()
	used, reads, written := s.launch.used[:0], s.launch.reads[:0], s.launch.written[:0]
	s.graphs.ExtendUsed(graph, &used, &reads)
	s.graphs.ExtendWritten(graph, &written)
	s.launch.used, s.launch.reads, s.launch.written = used, reads, written
	defer s.clearIO()
	if !s.graphs.Contains(graph) {
		return stream.ErrUnknownGraph
	}
	return s.streams.Launching(id, reads, written).Execute(func() error {
		r, err := s.streams.Resolve(id, used)
		if err != nil {
			return err
		}
		defer r.Close()
		if err := s.graphs.Replay(graph, r.Stream()); err != nil {
			return err
		}
		// A fault of the replayed work is reported by a later wait (confirmations).
		s.ledger.Wrote(s.ledger.Of(r.Stream().Sys), written...)
		return nil
	})
}

// GraphDestroy is graph_destroy: it waits for everything on stream id (a replay returns
// at enqueue time, so one may still run against the executable), then destroys the
// graph whatever the wait said (a failed wait means nothing is still running) and
// releases its retained slices and info pins. If the wait failed, only the graph's
// write set takes the failure: other work on the stream reports through its own reads.
// An unknown graph (a double destroy) does nothing, without waiting. It blocks.
func (s *Server) GraphDestroy(graph GraphID, id StreamID) {
	if !s.graphs.Contains(graph) {
		return
	}
	var written []Binding
	s.graphs.ExtendWritten(graph, &written)
	synced := s.Sync(nil, id).waitLocked()
	if r, err := s.streams.Resolve(id, nil); err == nil {
		r.Close()
	}
	if err := s.graphs.Destroy(graph); err != nil {
		s.log.Warn("server: graph destroy", "graph", graph, "err", err)
	}
	delete(s.owners, graph)
	if synced != nil {
		s.streams.FailedWriting(id, written, synced)
	}
	s.reclaimImports()
}
