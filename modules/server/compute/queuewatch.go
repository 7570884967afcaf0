package compute

import (
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// queueWatch wraps the Platform a Server drives and counts the work queued on each
// stream, so that the Server can know without a driver call that a stream it last saw
// idle has had nothing queued since. A small read takes a blocking copy when its stream
// is idle (read.go); asking the driver (hipStreamQuery) costs a good part of the 4-byte
// round trip (docs/benchmarks.md, "Asking the driver whether a stream is idle"), where
// the counters cost a map load and two atomic adds per queued call.
//
// Every method that queues work on a stream is overridden here; TestQueueWatchCoversStreamWork
// calls each Platform method that takes a stream through the watch, so a method added
// to hipsys.Platform later cannot slip past it.
type queueWatch struct {
	last atomic.Pointer[queueRecent] // the stream looked up last: a launch loop's hit
	hipsys.Platform
	queues sync.Map // hipsys.Stream -> *streamState
	guards sync.Map // hipsys.Stream -> *captureGuard (captureguard.go)

	// syncFailed hears of every failed StreamSynchronize made through the watch, by the
	// server's own code or the stream layer's, but syncQuiet's: a stream-wide wait is
	// where a device reports an asynchronous failure, and the server must not lose it.
	syncFailed func(hipsys.Stream, error)

	// flags is the platform's completion-flag wait (hipsys.FlagWaiter), set when the
	// server also holds a launch queue that flags launches (flags.go); nil otherwise.
	flags hipsys.FlagWaiter

	// The event recorded last and its stream, so that a wait for it (a cross-stream
	// fence: recorded on one stream, waited for by another at once) tells waited which
	// stream now runs after which (confirm.go: a failure of one is the other's too). An
	// event recorded and waited for elsewhere is not matched: a wait the watch cannot
	// attribute is the client's own ordering.
	recordMu      sync.Mutex
	recordedEvent hipsys.Event
	recorded      *streamState
	waited        func(waiter, src *streamState)

	// flaggedCopies is the platform's flagged device-to-host copy (hipsys.FlaggingCopier),
	// found once through its wrappers; nil when it has none.
	flaggedCopies hipsys.FlaggingCopier
}

// queueRecent pairs a stream with its state, immutable once published.
type queueRecent struct {
	s hipsys.Stream
	q *streamState
}

func newQueueWatch(p hipsys.Platform) *queueWatch {
	w := &queueWatch{Platform: p}
	if fc, ok := hipsys.As[hipsys.FlaggingCopier](p); ok {
		w.flaggedCopies = fc
	}
	return w
}

// state is s's counters. A run of calls on one stream reads one pointer: the map's
// lookup walks several nodes, each a likely cache miss after a driver call.
func (w *queueWatch) state(s hipsys.Stream) *streamState {
	if r := w.last.Load(); r != nil && r.s == s {
		return r.q
	}
	v, ok := w.queues.Load(s)
	if !ok {
		fresh := &streamState{}
		fresh.recent = queueRecent{s, fresh}
		v, _ = w.queues.LoadOrStore(s, fresh)
	}
	q := v.(*streamState)
	w.last.Store(&q.recent)
	return q
}

// begin counts a call that queues work on s, before it reaches the platform; end
// counts it done. A call that panics between them leaves the stream never again known
// idle: slower reads, never a wrong one. (Plain calls, not a closure: a launch's path
// stays short.)
func (w *queueWatch) begin(s hipsys.Stream) *streamState {
	q := w.state(s)
	q.begun.Add(1)
	return q
}

// The waits and the query: a success certifies what was queued before the call.

func (w *queueWatch) StreamQuery(s hipsys.Stream) error {
	return w.certify(s, w.Platform.StreamQuery)
}

func (w *queueWatch) StreamSynchronize(s hipsys.Stream) error {
	err := w.syncQuiet(s)
	if err != nil && w.syncFailed != nil {
		w.syncFailed(s, err)
	}
	return err
}

// syncQuiet is StreamSynchronize for a caller that handles a failure itself (a Sync's
// future; the acknowledgement of a failure already carried). A stream whose last work
// was a flagged launch is waited for on its completion flag (flags.go).
func (w *queueWatch) syncQuiet(s hipsys.Stream) error {
	_, err := w.syncCovering(s)
	return err
}

// syncCovering is syncQuiet, and whether the wait covered everything queued before it:
// false when s records a capture, and the wait covered the work before the capture
// (captureguard.go).
func (w *queueWatch) syncCovering(s hipsys.Stream) (whole bool, err error) {
	return w.waitGuarded(s, func() error {
		if w.flags != nil {
			return w.syncFlagged(s)
		}
		return w.certify(s, w.Platform.StreamSynchronize)
	})
}

// certify runs wait (a query or a sync of s) and, on success, records s idle as of the
// snapshot taken before it.
func (w *queueWatch) certify(s hipsys.Stream, wait func(hipsys.Stream) error) error {
	q := w.state(s)
	snap := q.snapshot()
	err := wait(s)
	if err == nil && snap != 0 {
		q.sawIdle(snap)
	}
	return err
}

func (w *queueWatch) DeviceSynchronize() error {
	type seen struct {
		q    *streamState
		snap uint64
	}
	var all []seen
	w.queues.Range(func(_, v any) bool {
		q := v.(*streamState)
		all = append(all, seen{q, q.snapshot()})
		return true
	})
	err := w.Platform.DeviceSynchronize()
	if err == nil {
		for _, s := range all {
			if s.snap != 0 {
				s.q.sawIdle(s.snap)
			}
		}
	}
	return err
}

func (w *queueWatch) StreamDestroy(s hipsys.Stream) error {
	err := w.Platform.StreamDestroy(s)
	if err == nil {
		// A later stream may get the same handle: it starts unknown.
		w.queues.Delete(s)
		if r := w.last.Load(); r != nil && r.s == s {
			w.last.CompareAndSwap(r, nil)
		}
	}
	return err
}

// Everything that queues work on a stream.

func (w *queueWatch) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.MemsetAsync(dst, value, size, s)
	q.end()
	return err
}

func (w *queueWatch) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.MemcpyHtoDAsync(dst, src, size, s)
	q.end()
	return err
}

func (w *queueWatch) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.MemcpyDtoHAsync(dst, src, size, s)
	q.end()
	return err
}

func (w *queueWatch) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.MemcpyDtoDAsync(dst, src, size, s)
	q.end()
	return err
}

func (w *queueWatch) Memcpy2DAsync(c hipsys.Copy2D, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.Memcpy2DAsync(c, s)
	q.end()
	return err
}

func (w *queueWatch) StreamWaitEvent(s hipsys.Stream, e hipsys.Event, flags uint32) error {
	q := w.begin(s)
	err := w.Platform.StreamWaitEvent(s, e, flags)
	q.end()
	if err == nil && w.waited != nil {
		w.recordMu.Lock()
		src := w.recorded
		if w.recordedEvent != e {
			src = nil
		}
		w.recordMu.Unlock()
		if src != nil && src != q {
			w.waited(q, src)
		}
	}
	return err
}

func (w *queueWatch) EventRecord(e hipsys.Event, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.EventRecord(e, s)
	q.end()
	if err == nil {
		w.recordMu.Lock()
		w.recordedEvent, w.recorded = e, q
		w.recordMu.Unlock()
	}
	return err
}

func (w *queueWatch) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	q := w.begin(s)
	err := w.Platform.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
	q.end()
	return err
}

// A cooperative launch queues its kernel on the stream as ModuleLaunchKernel does, and is
// counted the same way (it never goes through the launch queue).
func (w *queueWatch) ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	q := w.begin(s)
	err := w.Platform.ModuleLaunchCooperativeKernel(fn, grid, block, shmem, s, args)
	q.end()
	return err
}

// A capture queues nothing, but the stream's state changes under it: counted, so a
// stream is never taken for idle across a capture's beginning or end.
func (w *queueWatch) StreamBeginCapture(s hipsys.Stream, mode hipsys.CaptureMode) error {
	q := w.begin(s)
	err := w.beginGuarded(s, func() error { return w.Platform.StreamBeginCapture(s, mode) })
	q.end()
	return err
}

func (w *queueWatch) StreamEndCapture(s hipsys.Stream) (g hipsys.Graph, err error) {
	q := w.begin(s)
	g, err = w.Platform.StreamEndCapture(s)
	w.endGuarded(s)
	q.end()
	return g, err
}

func (w *queueWatch) GraphUpload(e hipsys.GraphExec, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.GraphUpload(e, s)
	q.end()
	return err
}

func (w *queueWatch) GraphLaunch(e hipsys.GraphExec, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.Platform.GraphLaunch(e, s)
	q.end()
	return err
}

// watchedQueue counts a launch queue's launches on their streams, as ModuleLaunchKernel
// is counted. A queued launch is work on its stream from the moment it is queued: a
// wait or a query settles the queue before the driver looks (hipsys.LaunchQueue), so
// what it certifies includes the launch.
type watchedQueue struct {
	hipsys.LaunchQueue
	w     *queueWatch
	flags hipsys.FlaggingQueue // the queue, when launches are flagged (flags.go); else nil
}

func (q watchedQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	st := q.w.state(s)
	n := st.begun.Add(1)
	var seq uint64
	var err error
	// expectWait counts every launch, so it runs first; a shared stream is never flagged
	// (streamstate.go, invariant 3).
	if q.flags != nil && st.flag.expectWait(n) && !st.shared.Load() {
		var token uint32
		seq, token, refused, err = q.flags.LaunchFlagged(fn, grid, block, shmem, s, args, refused)
		if token != 0 {
			st.flag.set(n, token)
		}
	} else {
		seq, refused, err = q.LaunchQueue.Launch(fn, grid, block, shmem, s, args, refused)
	}
	st.end()
	return seq, refused, err
}
