package main

import (
	"fmt"
	"io"
	"time"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
	"github.com/cubehip/cubehip/modules/hipsys/paired"
	"github.com/cubehip/cubehip/modules/server"
)

// bencher runs the measurements: each one the Device's loop, then the same work raw
// through hipsys on a stream of its own, in the same process.
type bencher struct {
	d     *server.Device
	p     hipsys.Platform
	scale float64
	out   io.Writer
}

const emptySource = `extern "C" __global__ void empty() {}`

var emptyK = server.NewKernel(emptySource, "empty", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil)

// count scales a loop count, never below 1.
func (b *bencher) count(n int) int { return max(1, int(float64(n)*b.scale)) }

// timed runs f n times per round, for three rounds, and returns the best round's µs
// per call: the figure the device can sustain, not a round a clock change or another
// process slowed. Progress shows which figure runs.
func (b *bencher) timed(what string, n int, f func(i int) error) (float64, error) {
	fmt.Fprintf(b.out, "  %-36s", what)
	best := 0.0
	for range 3 {
		t := time.Now()
		for i := range n {
			if err := f(i); err != nil {
				fmt.Fprintln(b.out)
				return 0, err
			}
		}
		v := float64(time.Since(t).Nanoseconds()) / float64(n) / 1e3
		if best == 0 || v < best {
			best = v
		}
		fmt.Fprint(b.out, ".")
	}
	fmt.Fprintf(b.out, " %10.3f µs\n", best)
	return best, nil
}

// paired runs dev and raw in blocks of n calls, back to back, each side going first in
// alternate rounds, and returns the median block time of each (µs per call) and the
// median of the rounds' ratios dev/raw. Launch figures drift within a process by more
// than a 5% budget: a drift slower than a pair of blocks cancels out of each ratio, so
// the median ratio is the comparison.
func (b *bencher) paired(what string, n int, dev, raw func(i int) error) (d, r, ratio float64, err error) {
	// 101 rounds, as BenchmarkLayers: fewer gave medians spread wider than the budgets
	// (docs/benchmarks.md, "Paired rounds: drift and the number of rounds").
	const rounds = 101
	fmt.Fprintf(b.out, "  %-36s", what)
	// Each block calls f with 0..n-1, as a loop over a block's calls would.
	side := func(f func(int) error) paired.Side {
		return func() (float64, error) {
			i := 0
			return paired.Block(n, func() error { err := f(i); i++; return err }, nil)()
		}
	}
	res, err := paired.Run(rounds, side(dev), side(raw))
	if err != nil {
		fmt.Fprintln(b.out)
		return 0, 0, 0, err
	}
	d, r, ratio = paired.Of(res.A).Median, paired.Of(res.B).Median, res.Ratio().Median
	fmt.Fprintf(b.out, " %8.3f µs against %.3f, x%.3f\n", d, r, ratio)
	return d, r, ratio, nil
}

func (b *bencher) measure() ([]figure, error) {
	d, p := b.d, b.p
	if err := d.Compile(emptyK); err != nil {
		return nil, err
	}
	fn, sys, cleanup, err := rawEmpty(p)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	var figs []figure
	nl, ns := b.count(100000), b.count(20000)
	small, err := d.Alloc(4)
	if err != nil {
		return nil, err
	}
	defer small.Release()
	four := make([]byte, 4)
	if err := d.Write(small, four); err != nil {
		return nil, err
	}
	g, err := b.deviceGraph()
	if err != nil {
		return nil, err
	}
	defer g.Destroy()
	// Launch throughput: a sync every 1024 launches keeps the queue short.
	devLaunch := func(i int) error {
		if i%1024 == 1023 {
			_ = d.Sync()
		}
		return d.Launch(emptyK, one, server.Args{})
	}
	devRead := func(int) error { return d.ReadInto(four, small) }
	devReplay := func(int) error { return g.Replay() }

	// Phase 1, while the Device's stream is the only one that has had work: the regime
	// the anchor measures in, its figures the raw ones (see replay for the regimes).
	type loop struct {
		name, key string
		n         int
		f         func(int) error
		budget    func(device, raw float64) (bool, string)
	}
	for _, l := range []loop{
		{"replay 10", "replay", ns, devReplay, within(5)},
		{"launch", "launch", nl, devLaunch, within(5)},
		{"read 4 B", "read", ns, devRead, within(15)},
	} {
		dev, err := b.timed("device "+l.name+", one stream", l.n, l.f)
		if err != nil {
			return nil, err
		}
		_ = d.Sync()
		figs = append(figs, figure{name: l.name + ", one stream", unit: "µs", anchorKey: l.key, budget: l.budget, device: dev})
	}

	na := b.count(20000)
	dev, err := b.timed("device alloc+free 1 MiB", na, func(int) error {
		buf, err := d.Alloc(1 << 20)
		if err != nil {
			return err
		}
		return buf.Release()
	})
	if err != nil {
		return nil, err
	}
	figs = append(figs, figure{name: "alloc+free 1 MiB", unit: "µs", device: dev, budget: func(dev, _ float64) (bool, string) {
		return dev < 1, "under 1 µs"
	}})

	// Phase 2: the same figures and raw hipsys in this process, now that a second stream
	// has had work; each figure held to the raw one of its own regime.
	rawPtr, err := p.Malloc(4)
	if err != nil {
		return nil, err
	}
	defer p.Free(rawPtr)
	rawLaunch := func(i int) error {
		if i%1024 == 1023 {
			_ = p.StreamSynchronize(sys)
		}
		return p.ModuleLaunchKernel(fn, one, one, 0, sys, nil)
	}
	for _, l := range []struct {
		name    string
		n       int
		dev     func(int) error
		raw     func(int) error
		rawName string
		budget  func(device, raw float64) (bool, string)
	}{
		{"launch", nl, devLaunch, rawLaunch, "hipModuleLaunchKernel", within(5)},
		{"read 4 B", ns, devRead, func(int) error { return p.MemcpyDtoH(four, rawPtr) }, "hipMemcpyDtoH", within(15)},
	} {
		// Blocks of a twentieth of the loop; every block ends synced, so the queue a
		// block leaves is not the next one's to drain.
		n := max(1, l.n/20)
		dev, raw, ratio, err := b.paired(l.name+" vs "+l.rawName, n,
			func(i int) error {
				if i == n-1 {
					defer d.Sync()
				}
				return l.dev(i)
			},
			func(i int) error {
				if i == n-1 {
					defer p.StreamSynchronize(sys)
				}
				return l.raw(i)
			})
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{name: l.name + ", streams", unit: "µs", budget: l.budget, device: dev, raw: raw, ratio: ratio, rawFrom: "hipsys"})
	}
	// On nvidia, the Device's launches and reads against the anchor's own loops, in C
	// in this process (rawdriver's LaunchLoop, ReadLoop): the budgets'
	// comparisons without two processes' difference in them.
	c, err := rawdriver.For(p)
	if err != nil {
		return nil, err
	}
	if c != nil {
		n := 1000 // under the Device loop's sync interval: one sync per block on each side
		dev, raw, ratio, err := b.paired("launch vs the anchor's loop in C", n,
			func(i int) error {
				if i == n-1 {
					defer d.Sync()
				}
				return d.Launch(emptyK, one, server.Args{})
			},
			func(i int) error {
				if i > 0 {
					return nil
				}
				_, err := c.LaunchLoop(fn, sys, n)
				return err
			})
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{name: "launch, C loop", unit: "µs", budget: within(5), device: dev, raw: raw, ratio: ratio, rawFrom: "C loop"})
		n = max(1, ns/20)
		dev, raw, ratio, err = b.paired("read 4 B vs the anchor's loop in C", n,
			func(int) error { return d.ReadInto(four, small) },
			func(i int) error {
				if i > 0 {
					return nil
				}
				_, err := c.ReadLoop(rawPtr, n)
				return err
			})
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{name: "read 4 B, C loop", unit: "µs", budget: within(15), device: dev, raw: raw, ratio: ratio, rawFrom: "C loop"})
		for i := range figs {
			switch figs[i].name {
			case "launch, one stream":
				figs[i].twin = "launch, C loop"
			case "read 4 B, one stream":
				figs[i].twin = "read 4 B, C loop"
			}
		}
	}
	f, err := b.replay(g, fn, sys, ns)
	if err != nil {
		return nil, err
	}
	figs = append(figs, f)

	copies, err := b.copies()
	if err != nil {
		return nil, err
	}
	return append(figs, copies...), nil
}

// deviceGraph captures 10 empty launches on the Device's stream 0.
func (b *bencher) deviceGraph() (*server.Graph, error) {
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	return b.d.Capture(func(s server.Stream) error {
		for range 10 {
			if err := s.Launch(emptyK, one, server.Args{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// replay measures g's replay again, and the same graph raw on sys, now that other
// streams have had work. The driver replays a graph faster while only one stream of
// the context has ever had work (docs/benchmarks.md, "Graph replay, one stream or
// several"), and the slower regime lasts for the rest of the process: each
// figure is held to the raw one of its own regime: here hipsys in this process (the
// anchor's replay-multi is not always in that regime).
// Neither loop syncs, as the anchor's does not: the driver bounds the queue.
func (b *bencher) replay(g *server.Graph, fn hipsys.Function, sys hipsys.Stream, n int) (figure, error) {
	d, p := b.d, b.p
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	// The raw graph, launched once on sys first: the device's stream is no longer the
	// only one with graph work, as in the anchor's replay-multi.
	if err := p.StreamBeginCapture(sys, hipsys.CaptureModeRelaxed); err != nil {
		return figure{}, err
	}
	for range 10 {
		if err := p.ModuleLaunchKernel(fn, one, one, 0, sys, nil); err != nil {
			_, _ = p.StreamEndCapture(sys)
			return figure{}, err
		}
	}
	graph, err := p.StreamEndCapture(sys)
	if err != nil {
		return figure{}, err
	}
	exec, err := p.GraphInstantiate(graph)
	_ = p.GraphDestroy(graph)
	if err != nil {
		return figure{}, err
	}
	defer p.GraphExecDestroy(exec)
	if err := p.GraphLaunch(exec, sys); err != nil {
		return figure{}, err
	}
	if err := p.StreamSynchronize(sys); err != nil {
		return figure{}, err
	}
	dev, err := b.timed("device graph replay, streams", n, func(int) error { return g.Replay() })
	if err != nil {
		return figure{}, err
	}
	_ = d.Sync()
	raw, err := b.timed("raw graph replay, streams", n, func(int) error { return p.GraphLaunch(exec, sys) })
	_ = p.StreamSynchronize(sys)
	f := figure{name: "replay 10, streams", unit: "µs", budget: within(5), device: dev, raw: raw, rawFrom: "hipsys"}
	return f, err
}

// copies measures 256 MiB from and into ordinary Go memory, through the Device's pinned
// pipeline and raw (pageable hipMemcpyHtoD / hipMemcpyDtoH).
func (b *bencher) copies() ([]figure, error) {
	d, p := b.d, b.p
	const big = 256 << 20
	buf, err := d.Alloc(big)
	if err != nil {
		return nil, err
	}
	defer buf.Release()
	ptr, err := p.Malloc(big)
	if err != nil {
		return nil, err
	}
	defer p.Free(ptr)
	host := make([]byte, big)
	for i := range host {
		host[i] = byte(i)
	}
	// Warm: the first copy also faults in every page on both sides.
	if err := d.Write(buf, host); err != nil {
		return nil, err
	}
	if _, err := d.Read(buf); err != nil {
		return nil, err
	}
	if err := p.MemcpyHtoD(ptr, host); err != nil {
		return nil, err
	}
	n := b.count(2)
	rate := func(usPer float64) float64 { return big / usPer / 1e3 }
	dw, err := b.timed("device write 256 MiB", n, func(int) error {
		if err := d.Write(buf, host); err != nil {
			return err
		}
		return d.Sync()
	})
	if err != nil {
		return nil, err
	}
	rw, err := b.timed("raw write 256 MiB (pageable)", n, func(int) error { return p.MemcpyHtoD(ptr, host) })
	if err != nil {
		return nil, err
	}
	dr, err := b.timed("device read 256 MiB", n, func(int) error { return d.ReadInto(host, buf) })
	if err != nil {
		return nil, err
	}
	rr, err := b.timed("raw read 256 MiB (pageable)", n, func(int) error { return p.MemcpyDtoH(host, ptr) })
	if err != nil {
		return nil, err
	}
	return []figure{
		{name: "write 256 MiB", unit: "GB/s", anchorKey: "pageable-htod", device: rate(dw), raw: rate(rw), rawFrom: "hipsys", budget: atLeast(2)},
		{name: "read 256 MiB", unit: "GB/s", anchorKey: "pageable-dtoh", device: rate(dr), raw: rate(rr), rawFrom: "hipsys", budget: atLeast(1)},
	}, nil
}

// rawEmpty loads the empty kernel by hand on a stream of its own.
func rawEmpty(p hipsys.Platform) (hipsys.Function, hipsys.Stream, func(), error) {
	prog, err := p.RTCCreateProgram(emptySource, "empty.hip", nil)
	if err != nil {
		return 0, 0, nil, err
	}
	defer p.RTCDestroyProgram(prog)
	if err := p.RTCCompileProgram(prog, nil); err != nil {
		return 0, 0, nil, err
	}
	code, err := p.RTCGetCode(prog)
	if err != nil {
		return 0, 0, nil, err
	}
	mod, err := p.ModuleLoadData(code)
	if err != nil {
		return 0, 0, nil, err
	}
	fn, err := p.ModuleGetFunction(mod, "empty")
	if err != nil {
		return 0, 0, nil, err
	}
	sys, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	if err != nil {
		return 0, 0, nil, err
	}
	return fn, sys, func() {
		_ = p.StreamSynchronize(sys)
		_ = p.StreamDestroy(sys)
		_ = p.ModuleUnload(mod)
	}, nil
}
