package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

// CopyFrom copies all of src, a buffer of another Device (or of this one), into dst, a
// buffer of s's Device of the same size, and returns once the copy is queued: it runs
// after src's last write and before dst's next use, on the devices, without the host
// waiting.
//
// The bytes go the shortest way the two devices allow: one device-to-device copy when
// both are the same GPU, a peer copy when the platform says the devices reach each other
// (peer access is enabled once per pair, the first time), and through the host's pinned
// staging memory in chunks otherwise (devices of two platforms, or GPUs without a peer
// path).
//
// The failure rules are a write's: a copy that fails leaves dst carrying the failure
// (a later Read, Sync or launch that reads dst reports it), a src that carries a failure
// passes it on to dst instead of being copied, and nothing else is touched. src is
// only read, and may be released as soon as CopyFrom returns: its stream reuses the
// memory only after the copy has read it.
//
// A capturing stream refuses the copy (ErrCaptureState): a graph's replay cannot wait
// for another device's work.
func (s Stream) CopyFrom(dst, src *Buffer) error {
	d := s.d
	if src == nil || src.d == nil {
		return fmt.Errorf("copy: %w: nil source buffer", ErrInvalidArgument)
	}
	if err := d.enter(); err != nil {
		return err
	}
	err := d.own(dst, "copy: destination")
	if err == nil && dst.size != src.size {
		err = fmt.Errorf("copy: %w: destination %v and source %v differ in size", ErrInvalidArgument, dst, src)
	}
	if st := d.srv.Streams().TryStream(s.id); err == nil && st != nil && st.Capture.State() != stream.CaptureNone {
		// A graph replays its work alone: it cannot wait for another device's stream,
		// and a capture refuses a wait on an event recorded outside it.
		err = fmt.Errorf("copy: %w: a copy from another device cannot be captured (stream %d)", ErrCaptureState, s.id)
	}
	d.leave()
	if err != nil {
		return err
	}
	route, err := d.routeFrom(src.d)
	if err != nil {
		return err
	}
	if route == routeHost {
		return s.copyThroughHost(dst, src)
	}
	return s.copyOnDevices(dst, src, route)
}

// CopyFromContext is CopyFrom that returns ctx.Err() when ctx is done first. Only the
// copy through the host waits (for src's bytes); cancelled then, it goes on in the
// background and dst ends as it would have. A context already done queues nothing.
func (s Stream) CopyFromContext(ctx context.Context, dst, src *Buffer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil {
		return s.CopyFrom(dst, src)
	}
	done := make(chan error, 1)
	go func() { done <- s.CopyFrom(dst, src) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// peerPair is one direction of peer access on one platform: from may address to's
// memory. Access belongs to the GPUs' contexts, which every Device on a GPU shares, so
// it is kept per platform and pair, not per Device.
type peerPair struct {
	p        hipsys.Platform
	from, to int
}

// enabledPairs holds the pairs whose access was enabled: once per pair and process.
var enabledPairs sync.Map // peerPair → true

// route is how bytes move between two Devices.
type route int

const (
	routeSame route = iota // the same GPU: a device-to-device copy
	routePeer              // a peer copy between two GPUs of one platform
	routeHost              // through host memory
)

// routeFrom picks the route from src's device to d's, enabling peer access from d to
// src's device the first time a pair uses it.
func (d *Device) routeFrom(src *Device) (route, error) {
	if d.srv == nil || src.srv == nil || d.srv.Platform() != src.srv.Platform() {
		return routeHost, nil
	}
	if d.index == src.index {
		return routeSame, nil
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	p := d.srv.Streams().Platform()
	ok, err := p.DeviceCanAccessPeer(d.index, src.index)
	if err != nil || !ok {
		return routeHost, nil // a platform that cannot say has no peer path to offer
	}
	pair := peerPair{d.srv.Platform(), d.index, src.index}
	if _, done := enabledPairs.Load(pair); !done {
		err := p.DeviceEnablePeerAccess(src.index, 0)
		// Another Device on this GPU (or another library in the process) may have
		// enabled the pair already; the access is there either way.
		if err != nil && !errors.Is(err, hipsys.ErrorPeerAccessAlreadyEnabled) {
			return routeHost, nil
		}
		enabledPairs.Store(pair, true)
	}
	return routePeer, nil
}

// Peers lists the indexes of the other devices of this Device's platform that it
// reaches directly (DeviceCanAccessPeer): copies from their buffers take the peer path.
func (d *Device) Peers() ([]int, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	p := d.srv.Streams().Platform()
	n, err := p.GetDeviceCount()
	if err != nil {
		return nil, err
	}
	var out []int
	for i := range n {
		if i == d.index {
			continue
		}
		ok, err := p.DeviceCanAccessPeer(d.index, i)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, i)
		}
	}
	return out, nil
}

// copyOnDevices queues a same-GPU or peer copy. Three steps, each under one Device's
// lock only, so two Devices copying towards each other cannot deadlock:
//  1. on src's device: order src's home stream after src's last write and record an
//     event there (a copy that cannot run keeps why for step 2: dst carries it);
//  2. on d: inside dst's write scope, make s wait for that event and queue the copy,
//     then record a second event;
//  3. on src's device: make src's home stream wait for the second event before the
//     hold on src is let go, so src's memory is not reused by that stream's later work
//     before the copy has read it.
func (s Stream) copyOnDevices(dst, src *Buffer, r route) error {
	d, sd := s.d, src.d
	ready, res, failed, err := sd.markSource(src)
	if err != nil {
		return err
	}
	p := d.srv.Streams().Platform()
	var copied hipsys.Event
	if err := d.enter(); err != nil {
		sd.letGoSource(ready, 0, res)
		return err
	}
	ms := d.srv.Streams()
	written := []compute.Binding{dst.b}
	copyErr := ms.Over(s.id, written).Execute(func() error {
		if failed != nil {
			return failed
		}
		rs, err := ms.Resolve(s.id, written)
		if err != nil {
			return err
		}
		defer rs.Close()
		sys := rs.Stream().Sys
		if err := p.StreamWaitEvent(sys, ready, 0); err != nil {
			return err
		}
		ptr, _, err := ms.Resource(dst.b)
		if err != nil {
			return err
		}
		if r == routeSame {
			err = p.MemcpyDtoDAsync(ptr, res.Ptr, dst.size, sys)
		} else {
			err = p.MemcpyPeerAsync(ptr, d.index, res.Ptr, sd.index, dst.size, sys)
		}
		if err != nil {
			return err
		}
		if copied, err = p.EventCreateWithFlags(hipsys.EventDisableTiming); err != nil {
			return err
		}
		return p.EventRecord(copied, sys)
	})
	d.leave()
	sd.letGoSource(ready, copied, res)
	if copyErr != nil {
		return fmt.Errorf("copy from %v: %w", src, copyErr)
	}
	return nil
}

// markSource is step 1 of copyOnDevices, on src's device: src's home stream waits for
// src's last write, and ready marks that point. When the copy cannot run, because src
// carries a failure (passed on) or a platform call here failed, failed says why and
// the destination takes it, as a write's destination takes its failed copy's error;
// err is a bad argument or a closed Device, which touch nothing.
func (sd *Device) markSource(src *Buffer) (ready hipsys.Event, res compute.Resource, failed, err error) {
	if err := sd.enter(); err != nil {
		return 0, res, nil, err
	}
	defer sd.leave()
	if err := sd.own(src, "copy: source"); err != nil {
		return 0, res, nil, err
	}
	p := sd.srv.Streams().Platform()
	if res, failed = sd.srv.GetResource(src.b, src.stream); failed != nil {
		return 0, compute.Resource{}, failed, nil
	}
	ready, failed = p.EventCreateWithFlags(hipsys.EventDisableTiming)
	if failed == nil {
		var st *stream.Stream
		if st, failed = sd.srv.Streams().Stream(src.stream); failed == nil {
			if failed = p.EventRecord(ready, st.Sys); failed != nil {
				_ = p.EventDestroy(ready)
			}
		}
	}
	if failed != nil {
		_ = res.Release()
		return 0, compute.Resource{}, failed, nil
	}
	return ready, res, nil, nil
}

// letGoSource is step 3 of copyOnDevices: src's home stream waits for copied (when the
// copy was queued), then the events and the hold on src go. Failures here cannot undo
// a queued copy; they are left to the stream's next synchronization to report.
func (sd *Device) letGoSource(ready, copied hipsys.Event, res compute.Resource) {
	p := sd.srv.Streams().Platform()
	if err := sd.enter(); err != nil {
		// Closed meanwhile: its memory and streams went with it, but the events are the
		// platform's, and would outlive it.
		for _, e := range []hipsys.Event{copied, ready} {
			if e != 0 {
				_ = p.EventDestroy(e)
			}
		}
		return
	}
	defer sd.leave()
	if copied != 0 {
		if st, err := sd.srv.Streams().Stream(res.Binding.Stream); err == nil {
			_ = p.StreamWaitEvent(st.Sys, copied, 0)
		}
		_ = p.EventDestroy(copied)
	}
	if ready != 0 {
		_ = p.EventDestroy(ready)
	}
	if res.Binding != (compute.Binding{}) {
		_ = res.Release()
	}
}

// copyThroughHost reads src into host memory and writes it into dst, both through the
// devices' pinned staging rings in chunks. A read that fails (src carrying a failure
// among them) leaves dst carrying it, as the peer path does.
func (s Stream) copyThroughHost(dst, src *Buffer) error {
	data, err := src.d.On(src.stream).Read(src)
	if err != nil {
		d := s.d
		if eerr := d.enter(); eerr != nil {
			return eerr
		}
		d.srv.Streams().FailedWriting(s.id, []compute.Binding{dst.b}, err)
		d.leave()
		return fmt.Errorf("copy from %v: %w", src, err)
	}
	return s.Write(dst, data)
}
