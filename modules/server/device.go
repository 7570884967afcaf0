package server

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/stream"
)

// Errors of the Device API, for errors.Is. Each comes back wrapped with what was wrong
// ("buffer of 4096 bytes was released"), never as a panic.
var (
	// ErrClosed is a call on a Device (or one of its buffers, kernels or graphs) after
	// Device.Close.
	ErrClosed = errors.New("server: device is closed")
	// ErrReleased is a buffer, graph or profile used after it was released, destroyed or
	// stopped.
	ErrReleased = errors.New("server: already released")
	// ErrForeign is a buffer or graph of another Device.
	ErrForeign = errors.New("server: belongs to another device")
)

// Options configure Open. The zero value opens the default device of the auto platform
// with the default pools.
type Options struct {
	// Platform is "auto" (also ""), "cpu", "nvidia" or "amd"; auto honours
	// $CUBEHIP_PLATFORM and otherwise takes amd, nvidia, cpu in that order.
	Platform string
	// Index is the device's number on its platform.
	Index int
	// MaxStreams bounds the device streams logical stream ids are spread over
	// (default stream.DefaultMaxStreams).
	MaxStreams int
	// Layout is the device pool layout streams are created with (default SubSlices).
	Layout memory.Layout
	// CacheDir is the kernel disk cache ("" is $CUBEHIP_CACHE_DIR or the user cache
	// dir; "-" disables it).
	CacheDir string
	// Logger receives the server's logs (default slog.Default()).
	Logger *slog.Logger
	// StagingChunk and StagingDepth shape the pinned pipeline of large copies from and
	// into Go memory: Depth chunks of Chunk bytes each (defaults 8 MiB and 3).
	StagingChunk uint64
	StagingDepth int
}

// Device is the handle users hold on one device: a Server behind a mutex, with buffers,
// kernels, graphs and profiles that check their own validity.
//
// A Device is safe for use by any number of goroutines. Every call makes the device's
// context current on the calling OS thread (the goroutine is locked to its thread for
// the call, and hipSetDevice runs first), so a Device can share a process with other
// devices and with C code that changes the current device. Calls are serialized on the
// server, but a wait for the device (a read's copy, a sync, a profile's end) happens
// after the lock is let go, so one goroutine waiting never stalls another's launches.
//
// Failures of work that writes device memory (a write, a launch, a replay) are carried
// by the buffers that work would have written, as in the Server: the enqueuing call
// returns nil, and a later Read, Sync or Check of those buffers returns the failure.
type Device struct {
	mu     sync.Mutex // guards srv and everything below
	srv    *Server
	p      hipsys.Platform
	index  int
	props  hipsys.DeviceProps
	closed bool

	staging *stagingRing // pinned chunks of the copy pipeline; nil until first needed
	opts    Options

	launch launchArgs // scratch of Launch, reused under mu: a launch allocates nothing
}

// Open opens device opts.Index of opts.Platform. The device is released by Close.
func Open(opts Options) (*Device, error) {
	p, err := hipsys.Open(opts.Platform)
	if err != nil {
		return nil, err
	}
	return OpenPlatform(p, opts)
}

// OpenPlatform opens device opts.Index of an already opened platform (opts.Platform is
// ignored): the way to run a Device over a wrapper such as faults.Platform.
func OpenPlatform(p hipsys.Platform, opts Options) (*Device, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil platform", ErrInvalidArgument)
	}
	n, err := p.GetDeviceCount()
	if err != nil {
		return nil, err
	}
	if opts.Index < 0 || opts.Index >= n {
		return nil, fmt.Errorf("%w: device %d of %s, which has %d", ErrInvalidArgument, opts.Index, p.Name(), n)
	}
	if opts.StagingChunk == 0 {
		opts.StagingChunk = 8 << 20
	}
	if opts.StagingDepth < 2 {
		opts.StagingDepth = 3
	}
	// New reads the thread's current device, so the thread must hold it first.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.SetDevice(opts.Index); err != nil {
		return nil, err
	}
	props, err := p.GetDeviceProperties(opts.Index)
	if err != nil {
		return nil, err
	}
	sopts := []stream.Option{stream.WithGPULayout(opts.Layout)}
	if opts.MaxStreams > 0 {
		sopts = append(sopts, stream.WithMaxStreams(opts.MaxStreams))
	}
	srvOpts := []Option{WithStreamOptions(sopts...), WithCacheDir(opts.CacheDir)}
	if opts.Logger != nil {
		srvOpts = append(srvOpts, WithLogger(opts.Logger))
	}
	srv, err := New(p, srvOpts...)
	if err != nil {
		return nil, err
	}
	return &Device{srv: srv, p: p, index: opts.Index, props: props, opts: opts}, nil
}

// Platform is the name of the platform the device is on ("cpu", "nvidia", "amd").
func (d *Device) Platform() string { return d.p.Name() }

// Index is the device's number on its platform.
func (d *Device) Index() int { return d.index }

// Props are the device's properties, read once by Open.
func (d *Device) Props() hipsys.DeviceProps { return d.props }

// Close waits for the device's streams, destroys its graphs and staging and releases the
// server. Buffers still held are not freed one by one: their memory goes with the
// device. Every later call on the device or on anything it made returns ErrClosed; a
// second Close returns nil.
func (d *Device) Close() error {
	if err := d.enter(); err != nil {
		if errors.Is(err, ErrClosed) {
			return nil
		}
		return err
	}
	defer runtime.UnlockOSThread()
	defer d.mu.Unlock()
	var errs []error
	errs = append(errs, d.p.DeviceSynchronize())
	if d.staging != nil {
		errs = append(errs, d.staging.free(d.p))
		d.staging = nil
	}
	errs = append(errs, d.srv.Close())
	d.closed = true
	return errors.Join(errs...)
}

// enter starts a call: it locks the goroutine to its OS thread, makes the device current
// there and takes the device's mutex. On success the caller ends with leave (or with
// d.mu.Unlock, a wait outside the lock, then runtime.UnlockOSThread). On failure nothing
// is held.
//
// The thread is locked before the mutex is taken so that the hipSetDevice below, and any
// wait after the mutex is let go, run on the thread whose current device it set.
func (d *Device) enter() error {
	if d == nil {
		return fmt.Errorf("%w: nil device", ErrInvalidArgument)
	}
	runtime.LockOSThread()
	if err := d.p.SetDevice(d.index); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		runtime.UnlockOSThread()
		return ErrClosed
	}
	return nil
}

// leave ends a call started by enter.
func (d *Device) leave() {
	d.mu.Unlock()
	runtime.UnlockOSThread()
}
