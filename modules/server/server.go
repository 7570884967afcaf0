package server

import (
	"log/slog"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/stream"
)

// StreamID is the logical stream a caller chose (CubeCL's StreamId); ids are spread over
// the device's streams by id % max streams.
type StreamID = stream.ID

// Binding is the seed's BufferBinding: a non-owning reference to an allocation (with its
// offsets) and the stream whose pools hold it. Every buffer argument is one.
type Binding = stream.Binding

// GraphID names a captured graph. Ids are never reused.
type GraphID = stream.GraphID

// Option configures a Server.
type Option func(*config)

type config struct {
	streamOpts []stream.Option
	cacheDir   string
	log        *slog.Logger
}

// WithStreamOptions passes options to the MultiStream (pool layouts, max streams, device
// facts, policies).
func WithStreamOptions(opts ...stream.Option) Option {
	return func(c *config) { c.streamOpts = append(c.streamOpts, opts...) }
}

// WithCacheDir sets the on-disk kernel cache directory (default: $CUBEHIP_CACHE_DIR, else
// cubehip under os.UserCacheDir()). "-" disables the disk cache.
func WithCacheDir(dir string) Option { return func(c *config) { c.cacheDir = dir } }

// WithLogger sets where the server and its streams log (default: stderr at the level
// $CUBEHIP_LOG names, warn when unset).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// Server is the seed's HipServer: one device's streams, its compiled kernels, the graphs
// it has captured and its profiler. Every method of the seed is here with its order,
// errors and taint behaviour (reference/semantics.md §1, §2, §5).
//
// A Server has one owner at a time, as in the seed: its methods must not be called
// concurrently (the Device in this package serializes them). The futures its reads, syncs
// and profiles return may be waited on from any goroutine, outside that ownership: they
// touch only events, pinned staging and reference counts, which are safe for concurrent
// use.
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
	p       hipsys.Platform
	launch  launchScratch   // reused by every launch: the steady state allocates nothing
	queue   *queuedLaunches // the Device's launch queue; nil: every launch on the caller's thread

	log    *slog.Logger
	props  hipsys.DeviceProps
	graphs stream.Captures
	owners map[GraphID]StreamID // the stream each live graph was captured on
	prof   *profiler
	one    [1]Binding // a one-buffer write set, reused by every write
}

// New builds a server over p for the calling thread's current device. It creates no
// stream (streams are created on first use) and compiles nothing. Close releases it.
func New(p hipsys.Platform, opts ...Option) (*Server, error) {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = defaultLogger()
	}
	dev, err := p.GetDevice()
	if err != nil {
		return nil, err
	}
	props, err := p.GetDeviceProperties(dev)
	if err != nil {
		return nil, err
	}
	ms, err := stream.New(p, append([]stream.Option{stream.WithLogger(c.log)}, c.streamOpts...)...)
	if err != nil {
		return nil, err
	}
	s := &Server{
		p: p, props: props, log: c.log, streams: ms,
		kernels: newKernelCache(p, props, c.cacheDir, c.log),
		prof:    newProfiler(p),
	}
	// The seed's on_failure: a failure inside a profiling window invalidates it, which
	// keeps a failing autotune candidate from timing near zero and winning the tune.
	ms.SetFailureHook(func(_ stream.ID, err error) { s.prof.failure(err) })
	return s, nil
}

// Platform is the platform the server runs on.
func (s *Server) Platform() hipsys.Platform { return s.p }

// Props are the device's properties, read once by New.
func (s *Server) Props() hipsys.DeviceProps { return s.props }

// Streams is the server's MultiStream, for the layers that need a stream's internals
// (tests, the Device's diagnostics). Using it concurrently with the server's owner is
// subject to [stream.MultiStream]'s contract.
func (s *Server) Streams() *stream.MultiStream { return s.streams }

// StreamIDs is one id per created device stream; feeding one back reaches that stream.
func (s *Server) StreamIDs() []StreamID { return s.streams.StreamIDs() }

// Close waits for every stream, destroys every captured graph, unloads the kernels,
// frees the profiler's pooled events and stops the release worker. It blocks. The server
// must not be used afterwards. Memory still held by handles stays with the platform.
// Failures of the waits are not returned: they belong to the buffers, which nobody can
// read any more.
func (s *Server) Close() error {
	for _, id := range s.StreamIDs() {
		if err := s.Sync(nil, id).Wait(); err != nil {
			s.log.Debug("server: close: stream wait failed", "stream", id, "err", err)
		}
	}
	for id, st := range s.owners {
		s.GraphDestroy(id, st)
	}
	s.prof.close()
	s.kernels.close()
	return s.streams.Close()
}
