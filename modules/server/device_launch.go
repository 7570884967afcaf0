package server

import (
	"fmt"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// LaunchArgs are a launch's arguments, passed to the kernel in this order: the buffers
// (each with the access the kernel's IO declares at its position), the scalars, and,
// when Info is non-empty or HasInfo is set, a pointer to a device buffer holding the
// info words, uploaded once per distinct content and then reused from the stream's info
// cache. Launch reads them during the call only.
type LaunchArgs struct {
	Buffers []*DeviceBuffer
	Scalars []Scalar
	Info    []uint64
	HasInfo bool
}

// Compile compiles k for the device now (or loads it from the kernel caches), so that a
// mistake in its source is reported here, with the compiler's log, rather than carried
// by the outputs of its first launch. Launch compiles on first use anyway.
func (d *Device) Compile(k *Kernel) error {
	if k == nil {
		return fmt.Errorf("compile: %w: nil kernel", ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	_, err := d.srv.kernels.load(k)
	return err
}

// Launch enqueues k on the stream over grid blocks of k.Block threads, and returns
// without waiting for it. It returns an error only for a call that enqueues nothing
// because it is malformed: a nil kernel, a released or foreign buffer, a buffer count
// that does not match k's IO. Everything that goes wrong with the work itself (a
// compile error, an input that carries a failure, a launch the driver refuses) is
// carried by the buffers k writes and returned by their next Read, Sync or Check, as in
// the Server. A grid with a zero dimension enqueues nothing and changes nothing.
//
// In steady state (k compiled, the buffers on this stream, the info cached) a launch
// allocates nothing. On a platform with a launch queue (nvidia; Options.DirectLaunch
// turns it off), such a launch may be issued by the queue's thread after Launch returns:
// the Device's next call of any other kind waits for it first, and applies a refusal to
// the buffers as the seed would have at once (launchqueue.go).
func (s Stream) Launch(k *Kernel, grid hipsys.Dim3, args LaunchArgs) error {
	d := s.d
	if err := d.enterLaunch(); err != nil {
		return err
	}
	defer d.leave()
	bs, err := d.bindings(args.Buffers, "launch")
	if err != nil {
		return err
	}
	count := CubeCount{X: grid.X, Y: grid.Y, Z: grid.Z}
	a := Args{Buffers: bs, Scalars: args.Scalars, Info: args.Info, HasInfo: args.HasInfo}
	err = d.srv.launchArgs(k, &count, &a, s.id, Execute)
	clear(bs)
	return err
}

// LaunchDynamic is Launch with the grid read from count (three uint32: x, y, z) when
// the launch runs, after the work queued before it. A count buffer that carries a
// failure, or that cannot be read, leaves k's outputs carrying that failure.
func (s Stream) LaunchDynamic(k *Kernel, count *DeviceBuffer, args LaunchArgs) error {
	d := s.d
	if err := d.enterLaunch(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.own(count, "launch: count"); err != nil {
		return err
	}
	bs, err := d.bindings(args.Buffers, "launch")
	if err != nil {
		return err
	}
	err = d.srv.Launch(k, Dynamic(count.b), Args{Buffers: bs, Scalars: args.Scalars, Info: args.Info, HasInfo: args.HasInfo}, s.id, Execute)
	clear(bs)
	return err
}
