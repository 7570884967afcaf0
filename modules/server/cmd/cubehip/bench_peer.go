package main

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
	"github.com/cubehip/cubehip/modules/server"
)

// peerBytes is the size of the peer-copy figure's copy.
const peerBytes = 256 << 20

// peerCopy is the figure "peer copy 256 MiB": a Device's CopyFrom of a buffer of the
// next device of the platform, beside the same bytes moved raw in this process: the
// host's memcpy on the cpu platform (its devices share the host's memory, so that is
// the rate a copy between them can reach), the driver's cuMemcpyPeerAsync loop
// (package rawdriver) on nvidia, and hipMemcpyPeerAsync through hipsys elsewhere. With
// one device there is no peer to copy from: the figure is n/a.
func (b *bencher) peerCopy() (figure, error) {
	f := figure{name: "peer copy 256 MiB", unit: "GB/s"}
	n, err := b.p.GetDeviceCount()
	if err != nil {
		return f, err
	}
	if n < 2 {
		f.na = fmt.Sprintf("needs 2 devices; %s has %d", b.d.Platform(), n)
		return f, nil
	}
	srcIndex := (b.d.Index() + 1) % n
	src, err := server.OpenPlatform(b.p, server.Options{Index: srcIndex, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return f, err
	}
	defer src.Close()
	sb, err := src.Alloc(peerBytes)
	if err != nil {
		return f, err
	}
	defer sb.Release()
	db, err := b.d.Alloc(peerBytes)
	if err != nil {
		return f, err
	}
	defer db.Release()
	fill := make([]byte, peerBytes)
	for i := range fill {
		fill[i] = byte(i)
	}
	if err := src.Write(sb, fill); err != nil {
		return f, err
	}
	copyOnce := func(int) error {
		if err := b.d.CopyFrom(db, sb); err != nil {
			return err
		}
		return b.d.Sync()
	}
	if err := copyOnce(0); err != nil { // warm: faults in every page, enables access
		return f, err
	}
	rate := func(usPer float64) float64 { return peerBytes / usPer / 1e3 }
	reps := b.count(4)
	dev, err := b.timed(fmt.Sprintf("device peer copy %d to %d", srcIndex, b.d.Index()), reps, copyOnce)
	if err != nil {
		return f, err
	}
	f.device = rate(dev)
	var raw float64
	switch b.p.Name() {
	case "cpu":
		// Held to the host's own copy: a budget of the cpu device's, judged there.
		f.rawFrom, f.budget, f.cpu = "memcpy", atLeast(0.8), true
		other := make([]byte, peerBytes)
		copy(other, fill)
		raw, err = b.timed("host memcpy 256 MiB", reps, func(int) error { copy(other, fill); return nil })
	default:
		f.budget = atLeast(0.9)
		raw, f.rawFrom, err = b.rawPeer(srcIndex, reps)
	}
	if err != nil {
		return f, err
	}
	f.raw = rate(raw)
	return f, nil
}

// rawPeer times reps raw peer copies of peerBytes from device src to the bench's
// device, on the calling thread (locked: the current device is the thread's), and
// returns µs per copy and who measured it.
func (b *bencher) rawPeer(src, reps int) (float64, string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, dst := b.p, b.d.Index()
	if err := p.SetDevice(src); err != nil {
		return 0, "", err
	}
	from, err := p.Malloc(peerBytes)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = p.SetDevice(src); _ = p.Free(from) }()
	if err := p.SetDevice(dst); err != nil {
		return 0, "", err
	}
	to, err := p.Malloc(peerBytes)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = p.SetDevice(dst); _ = p.Free(to) }()
	sys, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = p.SetDevice(dst); _ = p.StreamDestroy(sys) }()

	if p.Name() == "nvidia" {
		dd, err := rawdriver.Open(dst)
		if err != nil {
			return 0, "", err
		}
		sd, err := rawdriver.Open(src)
		if err != nil {
			return 0, "", err
		}
		if _, err := dd.PeerCopyLoop(to, sd, from, peerBytes, sys, 1); err != nil { // warm
			return 0, "", err
		}
		fmt.Fprintf(b.out, "  %-36s", "raw cuMemcpyPeerAsync 256 MiB")
		best := 0.0
		for range 3 {
			t, err := dd.PeerCopyLoop(to, sd, from, peerBytes, sys, reps)
			if err != nil {
				return 0, "", err
			}
			if v := float64(t.Nanoseconds()) / float64(reps) / 1e3; best == 0 || v < best {
				best = v
			}
		}
		fmt.Fprintf(b.out, " %10.3f µs\n", best)
		return best, "rawdriver", nil
	}
	if err := p.DeviceEnablePeerAccess(src, 0); err != nil && !errors.Is(err, hipsys.ErrorPeerAccessAlreadyEnabled) {
		return 0, "", err
	}
	once := func(int) error {
		if err := p.MemcpyPeerAsync(to, dst, from, src, peerBytes, sys); err != nil {
			return err
		}
		return p.StreamSynchronize(sys)
	}
	if err := once(0); err != nil {
		return 0, "", err
	}
	us, err := b.timed("raw hipMemcpyPeerAsync 256 MiB", reps, once)
	return us, "hipsys", err
}
