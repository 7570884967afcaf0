package compute

import (
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute/internal/ledger"
)

// queueWatch counts the work the Server queues on each stream into the stream's ledger
// entry (internal/ledger), so that the Server can know without a driver call that a
// stream it last saw idle has had nothing queued since. A small read takes a blocking
// copy when its stream is idle (read.go); asking the driver (hipStreamQuery) costs a
// good part of the 4-byte round trip (docs/benchmarks.md, "Asking the driver whether a
// stream is idle"), where the counters cost a pointer load and two atomic adds per
// queued call.
//
// The watch wraps the calls of queuing alone: it has one method per call of
// hipsys.QueuingCalls that Platform has, and the waits and the query that certify a
// stream idle. The Server and the stream layer drive it as a whole platform through
// watched, where its methods shadow the platform's own. TestQueueWatchCoversStreamWork
// calls each Platform method that takes a stream through watched, and checks that
// queuing lists every queuing one, so a method added to hipsys.Platform later cannot
// slip past it.
type queueWatch struct {
	calls  queuing
	ledger *ledger.Ledger

	// syncFailed hears of every failed StreamSynchronize made through the watch, by the
	// server's own code or the stream layer's, but syncQuiet's: a stream-wide wait is
	// where a device reports an asynchronous failure, and the server must not lose it.
	syncFailed func(hipsys.Stream, error)

	// flags is the platform's completion-flag wait (hipsys.FlagWaiter), set when the
	// server also holds a launch queue that flags launches (ledger's flags.go); nil
	// otherwise.
	flags hipsys.FlagWaiter

	// The event recorded last and its stream, so that a wait for it (a cross-stream
	// fence: recorded on one stream, waited for by another at once) tells waited which
	// stream now runs after which (a failure of one is the other's too: the ledger's
	// invariant 5). An event recorded and waited for elsewhere is not matched: a wait the
	// watch cannot attribute is the client's own ordering.
	recordMu      sync.Mutex
	recordedEvent hipsys.Event
	recorded      *ledger.Stream
	waited        func(waiter, src *ledger.Stream)

	// flaggedCopies is the platform's flagged device-to-host copy (hipsys.FlaggingCopier),
	// found once through its wrappers; nil when it has none.
	flaggedCopies hipsys.FlaggingCopier
}

// queuing is the part of hipsys.Platform the watch wraps or calls: every method of
// hipsys.QueuingCalls that Platform has, each counted as work on its stream; the waits
// and the query, whose success certifies a stream idle; the stream's destruction, which
// ends its ledger entry; and the capture guard's events (ledger.Events).
type queuing interface {
	MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, stream hipsys.Stream) error
	MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, stream hipsys.Stream) error
	MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, stream hipsys.Stream) error
	MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, stream hipsys.Stream) error
	Memcpy2DAsync(c hipsys.Copy2D, stream hipsys.Stream) error
	MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, stream hipsys.Stream) error
	StreamWaitEvent(stream hipsys.Stream, event hipsys.Event, flags uint32) error
	EventRecord(event hipsys.Event, stream hipsys.Stream) error
	ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, stream hipsys.Stream, args *hipsys.KernelArgs) error
	ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, sharedMemBytes uint32, stream hipsys.Stream, args *hipsys.KernelArgs) error
	StreamBeginCapture(stream hipsys.Stream, mode hipsys.CaptureMode) error
	StreamEndCapture(stream hipsys.Stream) (hipsys.Graph, error)
	GraphUpload(exec hipsys.GraphExec, stream hipsys.Stream) error
	GraphLaunch(exec hipsys.GraphExec, stream hipsys.Stream) error

	StreamQuery(stream hipsys.Stream) error
	StreamSynchronize(stream hipsys.Stream) error
	DeviceSynchronize() error
	StreamDestroy(stream hipsys.Stream) error

	ledger.Events
}

// watched is the platform a Server drives: the queue watch's methods in place of the
// platform's own, every other call the platform's untouched. The watch's methods are
// promoted from depth 1 and the platform's from depth 2 (through unwatched), and Go
// takes the shallower: no forwarding method to keep in step with hipsys.Platform.
type watched struct {
	*queueWatch
	unwatched
}

// unwatched is the platform one level down in watched, so that the watch's methods
// shadow its own.
type unwatched struct{ hipsys.Platform }

// newWatched wraps p in a queue watch.
func newWatched(p hipsys.Platform) *watched {
	return &watched{queueWatch: newQueueWatch(p), unwatched: unwatched{p}}
}

func newQueueWatch(p hipsys.Platform) *queueWatch {
	// The capture guard's event is recorded with the platform's own call: the watch's
	// would take it for a cross-stream fence.
	w := &queueWatch{calls: p, ledger: ledger.New(p)}
	if fc, ok := hipsys.As[hipsys.FlaggingCopier](p); ok {
		w.flaggedCopies = fc
	}
	return w
}

// begin counts a call that queues work on s, before it reaches the platform; End
// counts it done. A call that panics between them leaves the stream never again known
// idle: slower reads, never a wrong one. (Plain calls, not a closure: a launch's path
// stays short.)
func (w *queueWatch) begin(s hipsys.Stream) *ledger.Stream {
	q := w.ledger.Of(s)
	q.Begin()
	return q
}

// The waits and the query: a success certifies what was queued before the call.

func (w *queueWatch) StreamQuery(s hipsys.Stream) error {
	return w.ledger.Of(s).Certify(w.calls.StreamQuery)
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
// was a flagged launch is waited for on its completion flag.
func (w *queueWatch) syncQuiet(s hipsys.Stream) error {
	_, err := w.syncCovering(s)
	return err
}

func (w *queueWatch) DeviceSynchronize() error {
	return w.ledger.CertifyAll(w.calls.DeviceSynchronize)
}

func (w *queueWatch) StreamDestroy(s hipsys.Stream) error {
	err := w.calls.StreamDestroy(s)
	if err == nil {
		// A later stream may get the same handle: it starts unknown. Its capture guard's
		// event goes with it.
		err = w.ledger.Forget(s)
	}
	return err
}

// Everything that queues work on a stream.

func (w *queueWatch) MemsetAsync(dst hipsys.DevicePtr, value byte, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.MemsetAsync(dst, value, size, s)
	q.End()
	return err
}

func (w *queueWatch) MemcpyHtoDAsync(dst hipsys.DevicePtr, src hipsys.HostPtr, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.MemcpyHtoDAsync(dst, src, size, s)
	q.End()
	return err
}

func (w *queueWatch) MemcpyDtoHAsync(dst hipsys.HostPtr, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.MemcpyDtoHAsync(dst, src, size, s)
	q.End()
	return err
}

func (w *queueWatch) MemcpyDtoDAsync(dst, src hipsys.DevicePtr, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.MemcpyDtoDAsync(dst, src, size, s)
	q.End()
	return err
}

func (w *queueWatch) Memcpy2DAsync(c hipsys.Copy2D, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.Memcpy2DAsync(c, s)
	q.End()
	return err
}

// MemcpyPeerAsync queues a copy between devices on s: counted like every other copy, so
// a stream that ran one is not taken for idle.
func (w *queueWatch) MemcpyPeerAsync(dst hipsys.DevicePtr, dstDevice int, src hipsys.DevicePtr, srcDevice int, size uint64, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.MemcpyPeerAsync(dst, dstDevice, src, srcDevice, size, s)
	q.End()
	return err
}

func (w *queueWatch) StreamWaitEvent(s hipsys.Stream, e hipsys.Event, flags uint32) error {
	q := w.begin(s)
	err := w.calls.StreamWaitEvent(s, e, flags)
	q.End()
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
	err := w.calls.EventRecord(e, s)
	q.End()
	if err == nil {
		w.recordMu.Lock()
		w.recordedEvent, w.recorded = e, q
		w.recordMu.Unlock()
	}
	return err
}

func (w *queueWatch) ModuleLaunchKernel(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	q := w.begin(s)
	err := w.calls.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
	q.End()
	return err
}

// A cooperative launch queues its kernel on the stream as ModuleLaunchKernel does, and is
// counted the same way (it never goes through the launch queue).
func (w *queueWatch) ModuleLaunchCooperativeKernel(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream, args *hipsys.KernelArgs) error {
	q := w.begin(s)
	err := w.calls.ModuleLaunchCooperativeKernel(fn, grid, block, shmem, s, args)
	q.End()
	return err
}

func (w *queueWatch) GraphUpload(e hipsys.GraphExec, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.GraphUpload(e, s)
	q.End()
	return err
}

func (w *queueWatch) GraphLaunch(e hipsys.GraphExec, s hipsys.Stream) error {
	q := w.begin(s)
	err := w.calls.GraphLaunch(e, s)
	q.End()
	return err
}

// watchedQueue counts a launch queue's launches on their streams, as ModuleLaunchKernel
// is counted. A queued launch is work on its stream from the moment it is queued: a
// wait or a query settles the queue before the driver looks (hipsys.LaunchQueue), so
// what it certifies includes the launch.
type watchedQueue struct {
	hipsys.LaunchQueue
	w     *queueWatch
	flags hipsys.FlaggingQueue // the queue, when launches are flagged; else nil
}

func (q watchedQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	st := q.w.ledger.Of(s)
	n := st.Begin()
	var seq uint64
	var err error
	// ExpectWait counts every launch, so it runs first; it never flags a shared stream
	// (the ledger's invariant 3).
	if q.flags != nil && st.ExpectWait(n) {
		var token uint32
		seq, token, refused, err = q.flags.LaunchFlagged(fn, grid, block, shmem, s, args, refused)
		st.Flagged(n, token)
	} else {
		seq, refused, err = q.LaunchQueue.Launch(fn, grid, block, shmem, s, args, refused)
	}
	st.End()
	return seq, refused, err
}
