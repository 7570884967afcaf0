package compute

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute/internal/ledger"
	"github.com/cubehip/cubehip/modules/stream"
)

// StreamID is the logical stream a caller chose (CubeCL's StreamId); ids are spread over
// the device's streams by id % max streams.
type StreamID = stream.ID

// Binding is a non-owning reference to an allocation (with its offsets) and the stream
// whose pools hold it (CubeCL's BufferBinding). Every buffer argument is one.
type Binding = stream.Binding

// GraphID names a captured graph. Ids are never reused.
type GraphID = stream.GraphID

// Config configures a Server. The zero value is a server with the default pools, the
// default disk cache and logger, a 16 MiB × 3 staging ring, every launch issued on the
// caller's thread, and no owner lock.
type Config struct {
	// Stream passes options to the MultiStream (pool layouts, max streams, device
	// facts, policies).
	Stream []stream.Option
	// CacheDir is the on-disk kernel cache ("": $CUBEHIP_CACHE_DIR, else cubehip under
	// os.UserCacheDir(); "-": none).
	CacheDir string
	// Logger receives the server's and its streams' logs (default: stderr at the level
	// $CUBEHIP_LOG names, warn when unset).
	Logger *slog.Logger
	// StagingChunk and StagingDepth shape the staging ring that copies between Go memory
	// and the device go through: StagingDepth pinned chunks of StagingChunk bytes
	// (defaults 16 MiB and 3; a depth below 2 is 3, since one chunk cannot overlap the
	// host's copy with the device's). The chunks are allocated on the first copy and
	// kept until Close. 16 MiB splits into a 1 MiB part for each of 16 cores (copyPart,
	// below which Go's copy stops using non-temporal stores), where 8 MiB kept 8 of them
	// busy: docs/benchmarks.md has the shapes measured.
	StagingChunk uint64
	StagingDepth int
	// LaunchQueue takes the platform's launch queue (hipsys.LaunchQueuer) where it has
	// one: a launch on the fast path is then issued by the queue's thread (launchqueue.go).
	LaunchQueue bool
	// Owner is the lock the server's owner holds around every call. A copy larger than
	// the staging ring holds is finished by its future's Wait, outside the owner's call:
	// Wait takes Owner to queue each further chunk. With none, such a Wait acts as the
	// owner, so it must be called by the owner, or while the owner makes no other call.
	Owner sync.Locker
	// CompileOptions are appended to every kernel's options when the server compiles it
	// and when it names its code's identity for the disk cache (a kernel checker's option,
	// hipsys.CheckOption, for a checked Device): the Kernel stays the caller's, usable on
	// other servers without them.
	CompileOptions []string
}

// Server is CubeCL's HipServer: one device's streams, its compiled kernels, the graphs
// it has captured, its profiler and its staging. Its methods keep CubeCL's order, errors
// and failure tracking; where they differ, the method says so.
//
// A Server has one owner at a time: its methods must not be called concurrently (the
// user package's Device serializes them under Config.Owner). The futures its reads,
// writes, syncs and profiles return may be waited on from any goroutine: they touch only
// events, staging and reference counts, and take Config.Owner to queue more work.
//
// Failures of work that writes device memory (writes, launches, replays) are not returned
// by the call that enqueued it: they are carried by the buffers the work would have
// written and surface when those buffers are read, synced, checked, resolved or launched
// from, on any stream (see package stream's write scopes).
type Server struct {
	// What every launch reads comes first, together: after a driver call has evicted
	// the caches, each further cache line is a miss on the launch path.
	streams *stream.MultiStream
	kernels *kernelCache
	p       hipsys.Platform // the platform under the queue watch (watched): every call the server makes
	launch  launchScratch   // reused by every launch: the steady state allocates nothing
	queue   *queuedLaunches // the launch queue's records; nil: every launch on the caller's thread

	log     *slog.Logger
	watch   *queueWatch
	base    hipsys.Platform // the platform New was given: for the calls the watch must not see
	ledger  *ledger.Ledger  // what the server infers about each device stream (the watch's)
	device  int
	props   hipsys.DeviceProps
	graphs  stream.Captures
	owners  map[GraphID]StreamID // the stream each live graph was captured on
	imports atomic.Int64         // imports (Import) their streams have not reclaimed yet; changed under the owner's lock, read by release workers too
	prof    *profiler
	staging *ring   // the staging ring; its chunks are allocated on first use
	slots   slots   // small reads' pinned slots (smallread.go), allocated on first use
	foreign foreign // other libraries' streams (foreign.go)
	// callerReleases: releases Free handed over for its caller to run (CallerReleases).
	callerReleases []func()

	stagesSmallReads bool                        // the platform's hipsys.SmallReadStager says so
	failed           syncFailures                // unsynced.go: per device stream, the first failure since its last Sync
	fault            atomic.Pointer[deviceFault] // errors.go: the fault a failed wait reported, until a wait succeeds
	owner            sync.Locker                 // Config.Owner, or a lock nobody else takes
	one              [1]Binding                  // a one-buffer write set, reused by every write
}

// New builds a server over p for the calling thread's current device. It creates no
// stream (streams are created on first use) and compiles nothing. Close releases it.
func New(p hipsys.Platform, c Config) (*Server, error) {
	if p == nil {
		return nil, errors.New("compute: nil platform")
	}
	if c.Logger == nil {
		c.Logger = defaultLogger()
	}
	if c.StagingChunk == 0 {
		c.StagingChunk = 16 << 20
	}
	if c.StagingDepth < 2 {
		c.StagingDepth = 3
	}
	if c.Owner == nil {
		c.Owner = noLock{}
	}
	dev, err := p.GetDevice()
	if err != nil {
		return nil, err
	}
	props, err := p.GetDeviceProperties(dev)
	if err != nil {
		return nil, err
	}
	wp := newWatched(p)
	watch := wp.queueWatch
	ms, err := stream.New(wp, append([]stream.Option{stream.WithLogger(c.Logger)}, c.Stream...)...)
	if err != nil {
		return nil, err
	}
	s := &Server{
		p: wp, base: p, watch: watch, ledger: watch.ledger, device: dev, props: props, log: c.Logger, streams: ms,
		kernels: newKernelCache(wp, props, c.CacheDir, c.Logger, c.CompileOptions),
		prof:    newProfiler(wp),
		staging: newRing(c.StagingChunk, c.StagingDepth),
		owner:   c.Owner,
	}
	// Capabilities through hipsys.As, so that a wrapped platform keeps them.
	if st, ok := hipsys.As[hipsys.SmallReadStager](p); ok && st.StagesSmallReads() {
		s.stagesSmallReads = true
	}
	if f, ok := hipsys.As[hipsys.ForeignStreams](p); ok && f.OrdersForeignStreams() {
		s.foreign.calls = f
	}
	// CubeCL's on_failure: a failure inside a profiling window invalidates it, which
	// keeps a failing autotune candidate from timing near zero and winning the tune.
	ms.SetFailureHook(func(id stream.ID, err error) {
		s.prof.failure(err)
		s.failed.note(ms.DeviceStream(id), err) // a Sync of the stream reports it (unsynced.go)
	})
	// The ledger reports a device stream's failures under the id the stream layer
	// created it for, which is the one StreamIDs gives for it.
	ms.SetCreateHook(watch.ledger.Open)
	watch.syncFailed = s.streamWaitFailed
	watch.waited = watch.ledger.OrderedAfter
	if lq, ok := hipsys.As[hipsys.LaunchQueuer](p); ok && c.LaunchQueue {
		// Held by another server of this process on the same device: this one launches
		// directly, which is only slower.
		if q, err := lq.OpenLaunchQueue(dev); err == nil {
			fw, fq := flagging(p, q)
			watch.flags = fw
			s.queue = newQueuedLaunches(watchedQueue{LaunchQueue: q, w: watch, flags: fq})
		} else {
			s.log.Debug("compute: launching without a launch queue", "device", dev, "err", err)
		}
	}
	return s, nil
}

// noLock is the owner lock of a server whose owner takes none.
type noLock struct{}

func (noLock) Lock()   {}
func (noLock) Unlock() {}

// Platform is the platform New was given. The server's own calls go through a wrapper
// of it (queuewatch.go) that counts the work queued on each stream.
func (s *Server) Platform() hipsys.Platform { return s.base }

// Props are the device's properties, read once by New.
func (s *Server) Props() hipsys.DeviceProps { return s.props }

// MakeCurrent makes the server's device current on the calling OS thread. A caller that
// shares the process with other devices calls it, on a locked thread, before each call.
func (s *Server) MakeCurrent() error { return s.p.SetDevice(s.device) }

// Streams is the server's MultiStream, for the layers that need a stream's internals
// (tests, diagnostics). Using it concurrently with the server's owner is subject to
// [stream.MultiStream]'s contract.
func (s *Server) Streams() *stream.MultiStream { return s.streams }

// StreamIDs is one id per created device stream; feeding one back reaches that stream.
func (s *Server) StreamIDs() []StreamID { return s.streams.StreamIDs() }

// Close gives the launch queue back, waits for every stream and the device, destroys
// every captured graph, unloads the kernels, frees the profiler's pooled events and the
// staging ring, and closes the streams. It blocks; the server must not be used
// afterwards. Memory still held by handles stays with the platform. Failures of the
// stream waits are not returned: they belong to the buffers, which nobody can read any
// more; what is returned is the queue's own report and the teardown's failures.
func (s *Server) Close() error {
	var errs []error
	if s.queue != nil {
		// Refusals still queued have no reader left: only the queue's own report.
		errs = append(errs, s.queue.q.Close())
		s.queue = nil
	}
	// A capture another goroutine left open (between its calls) would make every wait
	// below fail: it is ended without a graph, its outputs carrying why.
	for _, id := range s.StreamIDs() {
		if st := s.streams.TryStream(id); st != nil && st.Capture.State() != stream.CaptureNone {
			written, err := st.AbortCapture()
			s.streams.Taint(ErrCaptureClosed, written...)
			errs = append(errs, err)
		}
	}
	for _, id := range s.StreamIDs() {
		if err := s.Sync(nil, id).waitLocked(); err != nil {
			s.log.Debug("compute: close: stream wait failed", "stream", id, "err", err)
		}
	}
	// The device-wide wait covers streams that are not the server's (another library's,
	// which may have waited on the server's and inherited its faults): like the stream
	// waits, its failure belongs to work nobody can read through the server any more.
	if err := s.p.DeviceSynchronize(); err != nil {
		s.log.Debug("compute: close: device wait failed", "err", err)
	}
	for id, st := range s.owners {
		s.GraphDestroy(id, st)
	}
	s.prof.close()
	s.kernels.close()
	errs = append(errs, s.closeForeign(), s.staging.release(s.p), s.slots.release(s.p), s.ledger.Close(), s.streams.Close())
	return errors.Join(errs...)
}
