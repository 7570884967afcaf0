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
// ("launch: buffer 2 (4096 bytes) was released"), never as a panic.
var (
	// ErrClosed is a call on a Device, or on a buffer, graph or profile it made, after
	// Device.Close.
	ErrClosed = errors.New("server: device is closed")
	// ErrReleased is a buffer, graph or profile used after it was released, destroyed
	// or stopped.
	ErrReleased = errors.New("server: already released")
	// ErrForeign is a buffer or graph of another Device.
	ErrForeign = errors.New("server: belongs to another device")
)

// Options configure Open. The zero value opens device 0 of the auto platform with the
// default pools.
type Options struct {
	// Platform is "auto" (also ""), "cpu", "nvidia" or "amd"; auto honours
	// $CUBEHIP_PLATFORM and otherwise takes amd, nvidia, cpu in that order.
	Platform string
	// Index is the device's number on its platform.
	Index int
	// MaxStreams bounds the device streams that stream ids are spread over (default
	// stream.DefaultMaxStreams).
	MaxStreams int
	// Layout is the device pool layout streams are created with (zero: SubSlices).
	Layout memory.Layout
	// CacheDir is the kernel disk cache ("": $CUBEHIP_CACHE_DIR or the user cache
	// dir; "-": none).
	CacheDir string
	// Logger receives the server's logs (default: stderr at $CUBEHIP_LOG's level, warn when unset).
	Logger *slog.Logger
	// StagingChunk and StagingDepth shape the pinned pipeline that copies from and into
	// Go memory go through: StagingDepth chunks of StagingChunk bytes (defaults 8 MiB
	// and 3). Pinned memory is taken on the first copy and kept until Close.
	StagingChunk uint64
	StagingDepth int
	// DirectLaunch issues every launch on the calling thread, as the platform's
	// ModuleLaunchKernel, instead of through the platform's launch queue where it has
	// one (nvidia): see Stream.Launch for what the queue changes.
	DirectLaunch bool
}

// Device is the handle users hold on one device: a Server behind a mutex, with buffers,
// kernels, graphs and profiles that check their own validity. Its embedded Stream is
// stream 0, so d.Write, d.Launch, d.Read ... work there; On(id) reaches the others.
//
// A Device is safe for use by any number of goroutines. On a platform with several
// devices every call makes the device's context current on the calling OS thread for its
// duration (the goroutine is locked to its thread, and hipSetDevice runs first), so a
// Device can share a process with other devices and with C code that changes the current
// device; with one device, there is no other to change to. Calls are serialized on the
// server, but the waits for the device (a read's copies, a sync, a profile's end event)
// happen after the lock is let go, so a goroutine waiting never stalls another's
// launches.
//
// Failures of work that writes device memory (a write, a launch, a replay) are carried
// by the buffers that work would have written, as in the Server: a later Read, Sync or
// Check of those buffers returns the failure, on any stream.
type Device struct {
	Stream // stream 0

	// What every call reads comes first, in one cache line: a launch follows a driver
	// call that has evicted the caches, and each further line is a miss.
	mu     sync.Mutex // guards srv and everything below
	srv    *Server
	bufs   []Binding // scratch buffer list of Launch and Sync: a launch allocates nothing
	closed bool

	// single is a platform with one device. Then every thread's current device is that
	// one (HIP's default, and there is no other to switch to), and each platform call makes
	// its context current itself, so a call neither locks its OS thread nor calls
	// hipSetDevice: per launch that is a cgo call, or a lookup and two interface calls,
	// and the cache lines they touch, which a driver call has just evicted.
	single bool

	calls   sync.WaitGroup  // calls in progress, waits included: Close waits for them
	p       hipsys.Platform // the platform behind watch: every call the Device and its server make
	watch   *queueWatch
	index   int
	props   hipsys.DeviceProps
	opts    Options
	staging *stagingRing       // the copy pipeline's pinned chunks; nil until the first copy
	queue   hipsys.LaunchQueue // the platform's launch queue, held until Close; nil if none
	one     [1]Binding         // a copy's one-buffer write set
}

// Open opens device opts.Index of opts.Platform; Close releases it.
func Open(opts Options) (*Device, error) {
	p, err := hipsys.Open(opts.Platform)
	if err != nil {
		return nil, err
	}
	return OpenPlatform(p, opts)
}

// OpenPlatform opens device opts.Index of an already opened platform (opts.Platform is
// not read): the way to run a Device over a wrapper such as faults.Platform.
func OpenPlatform(p hipsys.Platform, opts Options) (*Device, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil platform", ErrInvalidArgument)
	}
	n, err := p.GetDeviceCount()
	if err != nil {
		return nil, err
	}
	if opts.Index < 0 || opts.Index >= n {
		return nil, fmt.Errorf("%w: device %d of platform %s, which has %d", ErrInvalidArgument, opts.Index, p.Name(), n)
	}
	if opts.StagingChunk == 0 {
		opts.StagingChunk = 8 << 20
	}
	if opts.StagingDepth < 2 {
		opts.StagingDepth = 3
	}
	// New reads the thread's current device, so this thread must hold it until then.
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
	watch := newQueueWatch(p)
	srv, err := New(watch, srvOpts...)
	if err != nil {
		return nil, err
	}
	d := &Device{srv: srv, p: watch, watch: watch, index: opts.Index, props: props, opts: opts, single: n == 1}
	d.Stream = Stream{d: d}
	if lq, ok := p.(hipsys.LaunchQueuer); ok && !opts.DirectLaunch {
		// Held by another Device of this process on the same device: this one launches
		// directly, which is only slower.
		if q, err := lq.OpenLaunchQueue(opts.Index); err == nil {
			d.queue = q
			srv.queue = newQueuedLaunches(watchedQueue{LaunchQueue: q, w: watch})
		} else {
			srv.log.Debug("server: launching without a launch queue", "device", opts.Index, "err", err)
		}
	}
	return d, nil
}

// Platform is the name of the device's platform ("cpu", "nvidia", "amd").
func (d *Device) Platform() string { return d.p.Name() }

// Index is the device's number on its platform.
func (d *Device) Index() int { return d.index }

// Props are the device's properties, read once by Open.
func (d *Device) Props() hipsys.DeviceProps { return d.props }

// Close waits for the calls in progress (their waits included) and for the device, then
// frees the staging and closes the server, which destroys its graphs. Buffers still held
// are not freed one by one: their memory goes with the device. Every later call on the
// device, or on anything it made, returns ErrClosed, except Release, which is a no-op. A
// second Close returns nil.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	// Closed first, under the lock: no call starts after this, so the wait below sees
	// every call that will ever hold a staging chunk or a future of this server.
	d.closed = true
	d.mu.Unlock()
	d.calls.Wait()

	d.mu.Lock()
	defer d.mu.Unlock()
	errs := []error{d.p.SetDevice(d.index)}
	if d.queue != nil {
		// Refusals still queued have no reader left: only the queue's own report.
		d.srv.queue = nil
		errs = append(errs, d.queue.Close())
		d.queue = nil
	}
	errs = append(errs, d.p.DeviceSynchronize())
	if d.staging != nil {
		errs = append(errs, d.staging.release(d.p))
		d.staging = nil
	}
	errs = append(errs, d.srv.Close())
	return errors.Join(errs...)
}

// enter starts a call: it locks the goroutine to its OS thread and makes the device
// current on it (with several devices: see single), takes the device's mutex, and
// settles the launch queue, so that the call sees the failures of every launch before
// it (launchqueue.go). On success the caller ends with leave, or lets the mutex go with
// unlockToWait, waits, and ends with exit. On failure nothing is held.
//
// The thread is locked first so that hipSetDevice, the server calls and any wait after
// the mutex is let go all run on the one thread whose current device was set.
func (d *Device) enter() error {
	if err := d.enterLaunch(); err != nil {
		return err
	}
	d.srv.settleQueue()
	return nil
}

// enterLaunch is enter for a launch, which leaves the queue as it is: the launch either
// takes the fast path, which needs no failure, or settles the queue itself.
func (d *Device) enterLaunch() error {
	if d == nil {
		return fmt.Errorf("%w: nil device", ErrInvalidArgument)
	}
	if !d.single {
		runtime.LockOSThread()
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.unlockThread()
		return ErrClosed
	}
	if !d.single {
		if err := d.p.SetDevice(d.index); err != nil {
			d.mu.Unlock()
			d.unlockThread()
			return err
		}
	}
	return nil
}

// leave ends a call started by enter that still holds the mutex. Such a call is not
// counted in d.calls: Close takes the mutex before it tears anything down.
func (d *Device) leave() {
	d.mu.Unlock()
	d.unlockThread()
}

// unlockToWait lets the mutex go in a call that will wait for the device, counting the
// call first, so that Close, which takes the mutex and then waits for d.calls, waits for
// it too.
func (d *Device) unlockToWait() {
	d.calls.Add(1)
	d.mu.Unlock()
}

// exit ends a call that let go of the mutex with unlockToWait.
func (d *Device) exit() {
	d.calls.Done()
	d.unlockThread()
}

func (d *Device) unlockThread() {
	if !d.single {
		runtime.UnlockOSThread()
	}
}

// relock takes the mutex again in a call that let it go to wait. The device may have
// been closed meanwhile, which the caller reports; the server is still intact, since
// Close waits for this call before tearing anything down.
func (d *Device) relock() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.srv.settleQueue() // other goroutines may have launched meanwhile
	return nil
}
