package compute

import "sync"

// syncFailures is, per device stream, the first failure of work queued there since the
// stream's last Sync: a launch that did not compile, that the driver refused, that a
// failed input stopped, a write that failed, and a device fault that a wait (a read's,
// a write's, an allocation's) reported and left on the stream's writes. The buffers
// carry each failure as before; this record is what a Sync adds, so that a program that
// launches and syncs without reading sees its work failed, as it does with CUDA, where
// a stream's synchronization returns the errors of its asynchronous work.
//
// It is kept per device stream, not per logical id: ids that share a device stream
// (Options.MaxStreams below the ids in use) share its work and the driver's wait of
// it, which reports a fault of either id's work; the record follows the same rule.
//
// Every failure reaches it through the stream layer's failure hook (stream.MultiStream.
// FailedWriting runs it for every buffer failure the server or the stream layer makes),
// so a new failure path cannot forget it. The hook runs on whatever goroutine met the
// failure, the owner's or a future's wait, hence the lock: it is taken on failure paths
// and at a Sync only, never on a launch that succeeds.
type syncFailures struct {
	mu   sync.Mutex
	errs map[int]error // by device stream (stream.MultiStream.DeviceStream)
}

// note records err as device stream ds's failure unless one is recorded already: the
// first is the one the others most likely follow from (a failed input's failure passed
// on), and a Sync reports one error, not a log.
func (f *syncFailures) note(ds int, err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	if f.errs == nil {
		f.errs = make(map[int]error)
	}
	if f.errs[ds] == nil {
		f.errs[ds] = err
	}
	f.mu.Unlock()
}

// take returns and forgets ds's failure.
func (f *syncFailures) take(ds int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.errs[ds]
	if err != nil {
		delete(f.errs, ds)
	}
	return err
}

// TakeFailure returns, and forgets, the first failure of work queued on stream id's
// device stream since the last TakeFailure of that device stream: the error a launch
// returned or its outputs carry, a write's, or a device fault a wait inside another
// call (a read) reported. A Sync of the stream returns it: the Device's Sync takes it
// before its wait and again after, and a layer that syncs with Server.Sync itself calls
// it at its sync. Safe to call from any goroutine.
func (s *Server) TakeFailure(id StreamID) error {
	return s.failed.take(s.streams.DeviceStream(id))
}

// KeepFailure records err as stream id's failure for its next Sync unless one is
// recorded already: for a Sync that took a failure and could not report it (its caller
// stopped waiting). Safe to call from any goroutine.
func (s *Server) KeepFailure(id StreamID, err error) {
	s.failed.note(s.streams.DeviceStream(id), err)
}
