package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/memory"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// EnvCacheDir and EnvCacheMaxBytes are the environment variables that place the kernel
// disk cache (Options.CacheDir "" reads it) and cap its size (bytes, or with a K, M or
// G suffix; 0 for no cap).
const (
	EnvCacheDir      = compute.EnvCacheDir
	EnvCacheMaxBytes = compute.EnvCacheMaxBytes
)

// DefaultMaxStreams is the number of device streams stream ids are spread over when
// Options.MaxStreams is 0.
const DefaultMaxStreams = stream.DefaultMaxStreams

// Options configure Open. The zero value opens device 0 of the auto platform with the
// default pools.
type Options struct {
	// Platform is "auto" (also ""), "cpu", "nvidia" or "amd"; auto honours
	// $CUBEHIP_PLATFORM and otherwise takes amd, nvidia, cpu in that order.
	Platform string
	// Index is the device's number on its platform.
	Index int
	// MaxStreams bounds the device streams that stream ids are spread over (default
	// DefaultMaxStreams). Ids that share a device stream share its work and its faults.
	MaxStreams int
	// Layout is the device pool layout streams are created with (zero: SubSlices).
	Layout memory.Layout
	// CacheDir is the kernel disk cache ("": $CUBEHIP_CACHE_DIR or the user cache
	// dir; "-": none).
	CacheDir string
	// Logger receives the device's logs (default: stderr at $CUBEHIP_LOG's level, warn
	// when unset).
	Logger *slog.Logger
	// StagingChunk and StagingDepth shape the pinned pipeline that copies from and into
	// Go memory go through: StagingDepth chunks of StagingChunk bytes (defaults 16 MiB
	// and 3). Pinned memory is taken on the first copy and kept until Close.
	StagingChunk uint64
	StagingDepth int
	// DirectLaunch issues every launch on the calling thread instead of through the
	// platform's launch queue where it has one (nvidia): see Stream.Launch for what the
	// queue changes.
	DirectLaunch bool
	// Check runs every kernel the Device compiles under the kernel checker (check.go):
	// hipsys.CheckMemory, CheckInit, CheckSync, or'ed; $CUBEHIP_CHECK adds to it. Only the
	// cpu platform can check kernels; on another, asking for a check is an error that
	// says to run the program on the cpu device.
	Check hipsys.Checks
}

// Device is the handle users hold on one device. Its embedded Stream is stream 0, so
// every Stream method works on the Device itself, on stream 0; On(id) reaches the other
// streams. What a program mostly calls:
//
//	dev.Call(k, grid, args...)               // launch a kernel (Stream.Call), plain Go values
//	server.UploadSlice(dev.Stream, xs)       // a new buffer holding a slice (also AllocSlice)
//	server.ReadSlice[float32](dev.Stream, b) // a buffer's contents as a slice (ReadSliceInto)
//	dev.Write(b, data), dev.Read(b)          // bytes in and out (Stream.Write, Stream.Read)
//	dev.Sync(bufs...)                        // wait for the stream's work (Stream.Sync)
//	dev.Close()                              // release everything
//
// See Stream for the rest: Launch (CubeCL's argument order), Capture, Profile, Check,
// Import, ReadAt and WriteAt, the Context variants.
//
// A Device is safe for use by any number of goroutines. Calls are serialized, but the
// waits for the device (a read's copies, a sync, a profile's end event) happen after the
// Device's lock is let go, so a goroutine waiting never stalls another's launches. On a
// platform with several devices every call makes the device current on the calling OS
// thread for its duration (the goroutine is locked to its thread first), so a Device can
// share a process with other devices and with C code that changes the current device.
//
// A failure of work that writes device memory (a write, a launch, a replay) is carried
// by the buffers that work would have written: a later Read, Sync or Check of those
// buffers returns it, on any stream, and a launch that reads one passes the failure on
// to its own outputs instead of running. The call that queued the work returns it only
// when it was refused before anything ran.
type Device struct {
	Stream // stream 0

	// What every call reads comes first, in one cache line: a launch follows a driver
	// call that has evicted the caches, and each further line is a miss.
	mu     sync.Mutex // the server's owner lock; guards srv and everything below
	srv    *compute.Server
	bufs   []compute.Binding // scratch buffer list of Launch and Sync: a launch allocates nothing
	closed bool
	args   launchArgs // a launch's sorted arguments
	limits limits     // the device's launch limits
	trace  *tracer    // the open trace, nil when none (a launch checks only this)

	// The kernel launched last and its parameters, and every kernel's: the platform is
	// asked once per kernel.
	lastK      *Kernel
	lastParams []hipsys.KernelParam
	paramsOf   map[compute.KernelID][]hipsys.KernelParam
	coopLimit  map[coopShape]uint64
	dynShared  map[compute.KernelID]uint32 // MAX_DYNAMIC_SHARED_SIZE_BYTES as SetFuncAttribute set it, per kernel
	vals       []Arg                       // scratch: Call's Go values as Args (under mu)

	// single is a platform with one device. Then every thread's current device is that
	// one (HIP's default, and there is no other to switch to), and each platform call
	// makes its context current itself, so a call neither locks its OS thread nor calls
	// hipSetDevice: per launch that is a cgo call, or a lookup and two interface calls,
	// and the cache lines they touch, which a driver call has just evicted.
	single bool

	calls sync.WaitGroup // calls waiting outside the lock: Close waits for them
	index int
	// reclaim wakes the goroutine that starts the releases of imports another stream's
	// work used last (reclaim.go); reclaimStop ends it at Close.
	reclaim, reclaimStop chan struct{}
	desc                 [1]compute.CopyDescriptor // a read's or write's one descriptor, and its shape
	shape                [1]int
	op                   [1]compute.WriteOp
	trim                 trimmer // the trim of idle pools a release arms (trim.go)
	checksRelease        func()  // ends the platform's side of Options.Check (check.go)
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
	// First: a platform that cannot check kernels says so whether it has devices or not.
	checks, err := checkKernels(p, &opts)
	if err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			checks.release()
		}
	}()
	n, err := p.GetDeviceCount()
	if err != nil {
		return nil, err
	}
	if opts.Index < 0 || opts.Index >= n {
		return nil, fmt.Errorf("%w: device %d of platform %s, which has %d", ErrInvalidArgument, opts.Index, p.Name(), n)
	}
	// New reads the thread's current device, so this thread must hold it until then.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.SetDevice(opts.Index); err != nil {
		return nil, err
	}
	sopts := []stream.Option{stream.WithGPULayout(checks.layout)}
	if opts.MaxStreams > 0 {
		sopts = append(sopts, stream.WithMaxStreams(opts.MaxStreams))
	}
	d := &Device{index: opts.Index, single: n == 1}
	d.Stream = Stream{d: d}
	d.srv, err = compute.New(p, compute.Config{
		Stream: sopts, CacheDir: opts.CacheDir, Logger: opts.Logger,
		StagingChunk: opts.StagingChunk, StagingDepth: opts.StagingDepth,
		LaunchQueue: !opts.DirectLaunch, Owner: &d.mu, CompileOptions: checks.options,
	})
	if err != nil {
		return nil, err
	}
	d.limits = limitsOf(d.srv.Props())
	if path := os.Getenv(EnvTrace); path != "" {
		if err := d.startTrace(path); err != nil {
			_ = d.srv.Close()
			return nil, err
		}
	}
	d.startReclaimer()
	d.checksRelease, opened = checks.release, true
	return d, nil
}

// Platform is the name of the device's platform ("cpu", "nvidia", "amd").
func (d *Device) Platform() string { return d.srv.Platform().Name() }

// Index is the device's number on its platform.
func (d *Device) Index() int { return d.index }

// String names the device as a person reads it: "Device(cpu:0)", its platform and index.
func (d *Device) String() string {
	if d == nil || d.srv == nil {
		return "Device(nil)"
	}
	return "Device(" + d.Platform() + ":" + strconv.Itoa(d.index) + ")"
}

// Props are the device's properties, read once by Open.
func (d *Device) Props() hipsys.DeviceProps { return d.srv.Props() }

// Close waits for the calls in progress (their waits included) and for the device, then
// releases everything the device took, and returns once the release of every imported
// buffer (Stream.Import) has returned. Buffers still held are not freed one by one:
// their memory goes with the device. Every later call on the device, or on anything it
// made, returns ErrClosed, except Release, which is a no-op. A second Close returns nil.
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
	if d.reclaimStop != nil {
		close(d.reclaimStop)
	}
	d.stopTrim()
	d.calls.Wait()

	d.mu.Lock()
	cur := d.srv.MakeCurrent()
	err := errors.Join(cur, d.closeTrace(), d.srv.Close())
	d.mu.Unlock()
	// Imported memory is given back to its owners last, outside the lock: an owner's
	// release may call back into the Device (a buffer's Release, which is a no-op now).
	d.srv.Streams().WaitImports()
	if d.checksRelease != nil {
		d.checksRelease() // the platform's side of this Device's kernel checks
	}
	return err
}

// enter starts a call: it locks the goroutine to its OS thread and makes the device
// current on it (with several devices: see single), and takes the device's lock. On
// success the caller ends with leave, or lets the lock go with unlockToWait, waits, and
// ends with exit. On failure nothing is held.
//
// The thread is locked first so that hipSetDevice, the server calls and any wait after
// the lock is let go all run on the one thread whose current device was set.
func (d *Device) enter() error {
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
		if err := d.srv.MakeCurrent(); err != nil {
			d.mu.Unlock()
			d.unlockThread()
			return err
		}
	}
	return nil
}

// leave ends a call started by enter that still holds the lock. Such a call is not
// counted in d.calls: Close takes the lock before it tears anything down.
func (d *Device) leave() {
	d.mu.Unlock()
	d.unlockThread()
}

// unlockToWait lets the lock go in a call that will wait for the device, counting the
// call first, so that Close, which takes the lock and then waits for d.calls, waits for
// it too: the server stays intact until the wait is over.
func (d *Device) unlockToWait() {
	d.calls.Add(1)
	d.mu.Unlock()
}

// exit ends a call that let go of the lock with unlockToWait.
func (d *Device) exit() {
	d.calls.Done()
	d.unlockThread()
}

func (d *Device) unlockThread() {
	if !d.single {
		runtime.UnlockOSThread()
	}
}
