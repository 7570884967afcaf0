package rawdriver

/*
#include <stdlib.h>
#include "rawdriver.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/dl"
)

// Driver runs the anchor loops on one device's primary context.
type Driver struct {
	device int
	ctx    C.uintptr_t
	runner Runner // nil: the calling thread
}

// Runner runs the C function fn (void fn(void*)) with arg on a thread of its own choosing
// and returns once fn has returned (or never runs it: the loop then fails). fn and arg
// are C memory.
type Runner func(fn, arg unsafe.Pointer)

// On is d with its launch, graph and read loops run by r: on the thread a C host's
// calls are made from, say, so that a pair's two loops run on one thread. The driver
// keeps state per thread (the current context, and what a wait costs), and a loop and
// the loop it is held to on two threads differ by that as well as by what they call.
func (d *Driver) On(r Runner) *Driver {
	c := *d
	c.runner = r
	return &c
}

// job runs one loop: on the calling thread, or handed to d.runner in C memory (another
// thread may not keep a Go pointer).
func (d *Driver) job(loop C.int, handle, stream C.uintptr_t, n int, sync C.int) (C.double, C.CUresult) {
	if d.runner == nil {
		var us C.double
		var r C.CUresult
		switch loop {
		case C.RAWD_JOB_LAUNCH:
			r = C.rawd_launch_loop(d.ctx, handle, stream, C.int(n), sync, &us)
		case C.RAWD_JOB_GRAPH:
			r = C.rawd_graph_loop(d.ctx, handle, stream, C.int(n), &us)
		default:
			r = C.rawd_read_loop(d.ctx, C.CUdeviceptr(handle), C.int(n), &us)
		}
		return us, r
	}
	j := (*C.rawd_job)(C.calloc(1, C.sizeof_rawd_job))
	if j == nil {
		return 0, 2 // CUDA_ERROR_OUT_OF_MEMORY
	}
	defer C.free(unsafe.Pointer(j))
	// r stays CUDA_ERROR_UNKNOWN where the runner could not run the job.
	*j = C.rawd_job{loop: loop, n: C.int(n), sync: sync, ctx: d.ctx, handle: handle, stream: stream, r: 999}
	d.runner(unsafe.Pointer(C.rawd_run_job), unsafe.Pointer(j))
	return j.us, j.r
}

var (
	loadOnce sync.Once
	loadErr  error
	openMu   sync.Mutex
	opened   = map[int]*Driver{}
)

// load resolves the loops' entry points from libcuda.so.1, once per process.
func load() error {
	loadOnce.Do(func() {
		lib, err := dl.Open("libcuda.so.1")
		if err != nil {
			loadErr = fmt.Errorf("rawdriver: %w", err)
			return
		}
		f := &C.rawd_cu
		e := func(addr **[0]byte, names ...string) dl.Entry {
			return dl.Entry{Names: names, Addr: (*unsafe.Pointer)(unsafe.Pointer(addr))}
		}
		loadErr = lib.Resolve([]dl.Entry{
			e(&f.init, "cuInit"),
			e(&f.deviceGet, "cuDeviceGet"),
			e(&f.primaryCtxRetain, "cuDevicePrimaryCtxRetain"),
			e(&f.ctxGetCurrent, "cuCtxGetCurrent"),
			e(&f.ctxSetCurrent, "cuCtxSetCurrent"),
			e(&f.launchKernel, "cuLaunchKernel"),
			e(&f.streamSynchronize, "cuStreamSynchronize"),
			e(&f.graphLaunch, "cuGraphLaunch"),
			e(&f.memAlloc, "cuMemAlloc_v2"),
			e(&f.memFree, "cuMemFree_v2"),
			e(&f.memcpyDtoH, "cuMemcpyDtoH_v2"),
			e(&f.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
			e(&f.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
			e(&f.memcpyPeerAsync, "cuMemcpyPeerAsync"),
			e(&f.ctxEnablePeerAccess, "cuCtxEnablePeerAccess"),
		})
	})
	return loadErr
}

// Open returns the loops for device's primary context (the context package nvidia
// uses), retaining it for the life of the process.
func Open(device int) (*Driver, error) {
	if device < 0 {
		return nil, fmt.Errorf("rawdriver: device %d", device)
	}
	if err := load(); err != nil {
		return nil, err
	}
	openMu.Lock()
	defer openMu.Unlock()
	if d := opened[device]; d != nil {
		return d, nil
	}
	var ctx C.uintptr_t
	if err := check("opening device "+fmt.Sprint(device), C.rawd_retain(C.int(device), &ctx)); err != nil {
		return nil, err
	}
	d := &Driver{device: device, ctx: ctx}
	opened[device] = d
	return d, nil
}

// For returns the loops for the calling thread's current device of p when p is the
// nvidia platform, and nil for any other platform: the loops are the CUDA driver's.
func For(p hipsys.Platform) (*Driver, error) {
	if p.Name() != "nvidia" {
		return nil, nil
	}
	dev, err := p.GetDevice()
	if err != nil {
		return nil, err
	}
	return Open(dev)
}

// LaunchLoop launches fn n times on s (a grid and a block of one, no arguments) with
// cuLaunchKernel, then syncs s; it returns the time that took, measured in C.
func (d *Driver) LaunchLoop(fn hipsys.Function, s hipsys.Stream, n int) (time.Duration, error) {
	return d.launch(fn, s, n, false)
}

// LaunchSyncLoop is LaunchLoop with a sync of s after every launch.
func (d *Driver) LaunchSyncLoop(fn hipsys.Function, s hipsys.Stream, n int) (time.Duration, error) {
	return d.launch(fn, s, n, true)
}

func (d *Driver) launch(fn hipsys.Function, s hipsys.Stream, n int, sync bool) (time.Duration, error) {
	if err := checkCount(n); err != nil {
		return 0, err
	}
	y := C.int(0)
	if sync {
		y = 1
	}
	us, r := d.job(C.RAWD_JOB_LAUNCH, C.uintptr_t(fn), C.uintptr_t(s), n, y)
	return elapsed(us), check("launch loop", r)
}

// GraphLoop launches e n times on s with cuGraphLaunch, then syncs s.
func (d *Driver) GraphLoop(e hipsys.GraphExec, s hipsys.Stream, n int) (time.Duration, error) {
	if err := checkCount(n); err != nil {
		return 0, err
	}
	us, r := d.job(C.RAWD_JOB_GRAPH, C.uintptr_t(e), C.uintptr_t(s), n, 0)
	return elapsed(us), check("graph loop", r)
}

// ReadLoop copies 4 bytes from p into C memory n times with cuMemcpyDtoH.
func (d *Driver) ReadLoop(p hipsys.DevicePtr, n int) (time.Duration, error) {
	if err := checkCount(n); err != nil {
		return 0, err
	}
	us, r := d.job(C.RAWD_JOB_READ, C.uintptr_t(p), 0, n, 0)
	return elapsed(us), check("read loop", r)
}

// AllocLoop allocates size bytes with cuMemAlloc and frees them with cuMemFree, n times.
func (d *Driver) AllocLoop(size uint64, n int) (time.Duration, error) {
	if err := checkCount(n); err != nil {
		return 0, err
	}
	var us C.double
	r := C.rawd_alloc_loop(d.ctx, C.size_t(size), C.int(n), &us)
	return elapsed(us), check("alloc loop", r)
}

// CopyLoop copies size bytes between pinned host memory h and device memory p n times
// on s (host to device when up is set, with cuMemcpyHtoDAsync, else cuMemcpyDtoHAsync),
// then syncs s.
func (d *Driver) CopyLoop(p hipsys.DevicePtr, h hipsys.HostPtr, size uint64, up bool, s hipsys.Stream, n int) (time.Duration, error) {
	if err := checkCount(n); err != nil {
		return 0, err
	}
	y := C.int(0)
	if up {
		y = 1
	}
	var us C.double
	r := C.rawd_copy_loop(d.ctx, C.CUdeviceptr(p), C.uintptr_t(h), C.size_t(size), y, C.uintptr_t(s), C.int(n), &us)
	return elapsed(us), check("copy loop", r)
}

// PeerCopyLoop copies size bytes from src, memory of from's device, to dst, memory of
// d's device, n times with cuMemcpyPeerAsync on s (a stream of d's device), after
// enabling access from d's context to from's, then syncs s.
func (d *Driver) PeerCopyLoop(dst hipsys.DevicePtr, from *Driver, src hipsys.DevicePtr, size uint64, s hipsys.Stream, n int) (time.Duration, error) {
	if err := checkCount(n); err != nil {
		return 0, err
	}
	if from == nil {
		return 0, fmt.Errorf("rawdriver: peer copy from no device")
	}
	var us C.double
	r := C.rawd_peer_loop(d.ctx, C.CUdeviceptr(dst), d.ctx, C.CUdeviceptr(src), from.ctx, C.size_t(size), C.uintptr_t(s), C.int(n), &us)
	return elapsed(us), check("peer copy loop", r)
}

func checkCount(n int) error {
	if n < 1 || n > 1<<30 {
		return fmt.Errorf("rawdriver: a loop of %d iterations", n)
	}
	return nil
}

func elapsed(us C.double) time.Duration { return time.Duration(float64(us) * 1e3) }

// check turns a CUresult into an error naming the loop; the driver's own error names
// are package nvidia's business, so the code is given as a number.
func check(what string, r C.CUresult) error {
	if r != 0 {
		return fmt.Errorf("rawdriver: %s: CUresult %d", what, int(r))
	}
	return nil
}
