package server_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
	"github.com/cubehip/cubehip/modules/hipsys/paired"
	"github.com/cubehip/cubehip/modules/server"
)

// The Device performance budgets, on whatever platform auto picks.
// Each reports its figure with b.ReportMetric; the BenchmarkHipsys* ones are the same
// work straight through hipsys in the same run, the in-Go anchor on platforms with no C
// one (on the H200 the driver-API program in modules/hipsys/nvidia/bench is the anchor).

// syncEvery keeps the stream's queue short in launch loops: a queue that grows without
// bound measures the queue, not the launch.
const syncEvery = 1024

func BenchmarkDeviceLaunch(b *testing.B) {
	d := benchDevice(b)
	require.NoError(b, d.Launch(devEmpty, hipsys.Dim3{X: 1, Y: 1, Z: 1}, server.Args{}))
	require.NoError(b, d.Sync())
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := d.Launch(devEmpty, one, server.Args{}); err != nil {
			b.Fatal(err)
		}
		if i%syncEvery == syncEvery-1 {
			_ = d.Sync()
		}
	}
	require.NoError(b, d.Sync())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/launch")
}

// BenchmarkDeviceLaunchBorrowed is a launch on stream 1 of a buffer made on stream 0,
// against the same launch on stream 0: each such launch lends the buffer to stream 1,
// which holds it until a fence after its work (one fence per stream.pinBatch launches).
func BenchmarkDeviceLaunchBorrowed(b *testing.B) {
	for _, on := range []server.StreamID{0, 1} {
		b.Run(fmt.Sprintf("stream%d", on), func(b *testing.B) {
			d := benchDevice(b)
			s := d.On(on)
			x := alloc(b, d.On(0), 256)
			one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
			args := server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(4)}}
			require.NoError(b, s.Launch(devInc, one, args))
			require.NoError(b, d.Sync())
			for i := 0; b.Loop(); i++ {
				if err := s.Launch(devInc, one, args); err != nil {
					b.Fatal(err)
				}
				if i%syncEvery == syncEvery-1 {
					_ = s.Sync()
				}
			}
			require.NoError(b, s.Sync())
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/launch")
		})
	}
}

func BenchmarkHipsysLaunch(b *testing.B) {
	p, sys, fn := rawKernel(b, devEmpty)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := p.ModuleLaunchKernel(fn, one, one, 0, sys, nil); err != nil {
			b.Fatal(err)
		}
		if i%syncEvery == syncEvery-1 {
			_ = p.StreamSynchronize(sys)
		}
	}
	require.NoError(b, p.StreamSynchronize(sys))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/launch")
}

func BenchmarkDeviceAllocFree1MiB(b *testing.B) {
	d := benchDevice(b)
	warm, err := d.Alloc(1 << 20) // the page exists before the loop
	require.NoError(b, err)
	require.NoError(b, warm.Release())
	b.ReportAllocs()
	for b.Loop() {
		buf, err := d.Alloc(1 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if err := buf.Release(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/alloc+free")
}

func BenchmarkDeviceRead4B(b *testing.B) {
	d := benchDevice(b)
	buf := upload(b, d.Stream, 42)
	out := make([]byte, 4)
	require.NoError(b, d.ReadInto(out, buf))
	b.ReportAllocs()
	for b.Loop() {
		if err := d.ReadInto(out, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/read")
}

func BenchmarkHipsysRead4B(b *testing.B) {
	p, err := hipsys.Open("auto")
	require.NoError(b, err)
	ptr, err := p.Malloc(4)
	require.NoError(b, err)
	defer p.Free(ptr)
	out := make([]byte, 4)
	for b.Loop() {
		if err := p.MemcpyDtoH(out, ptr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/read")
}

// The replay loops do not sync, as the anchor's does not: the driver bounds the queue.
// Each is to run in a process of its own (-test.bench '^BenchmarkDeviceGraphReplay10$'),
// as build/gpu/run.sh does: the driver replays a graph faster while only one stream of
// the context has ever had work, and a process that ran other benchmarks first has had
// work on many (modules/hipsys/nvidia/bench_test.go says more).
func BenchmarkDeviceGraphReplay10(b *testing.B) {
	d := benchDevice(b)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	g, err := d.Capture(func(s server.Stream) error {
		for range 10 {
			if err := s.Launch(devEmpty, one, server.Args{}); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(b, err)
	defer g.Destroy()
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Replay(); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, d.Sync())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/replay")
}

func BenchmarkHipsysGraphReplay10(b *testing.B) {
	p, sys, fn := rawKernel(b, devEmpty)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(b, p.StreamBeginCapture(sys, hipsys.CaptureModeGlobal))
	for range 10 {
		require.NoError(b, p.ModuleLaunchKernel(fn, one, one, 0, sys, nil))
	}
	graph, err := p.StreamEndCapture(sys)
	require.NoError(b, err)
	exec, err := p.GraphInstantiate(graph)
	require.NoError(b, err)
	defer p.GraphExecDestroy(exec)
	_ = p.GraphDestroy(graph)
	for b.Loop() {
		if err := p.GraphLaunch(exec, sys); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, p.StreamSynchronize(sys))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/replay")
}

const bigCopy = 256 << 20

func BenchmarkDeviceWrite256MiB(b *testing.B) {
	d := benchDevice(b)
	buf := alloc(b, d.Stream, bigCopy)
	data := make([]byte, bigCopy)
	for i := range data {
		data[i] = byte(i)
	}
	// Warm: the first copy also faults in every page of both sides.
	require.NoError(b, d.Write(buf, data))
	require.NoError(b, d.Sync())
	b.SetBytes(bigCopy)
	for b.Loop() {
		if err := d.Write(buf, data); err != nil {
			b.Fatal(err)
		}
		// Done means on the device: the write returns when its last chunk is queued.
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	reportGBs(b)
}

func BenchmarkDeviceRead256MiB(b *testing.B) {
	d := benchDevice(b)
	buf := alloc(b, d.Stream, bigCopy)
	require.NoError(b, d.Write(buf, make([]byte, bigCopy)))
	out := make([]byte, bigCopy)
	require.NoError(b, d.ReadInto(out, buf))
	b.SetBytes(bigCopy)
	for b.Loop() {
		if err := d.ReadInto(out, buf); err != nil {
			b.Fatal(err)
		}
	}
	reportGBs(b)
}

// BenchmarkHipsysCopy256MiB is the raw pageable rate: hipMemcpyHtoD and hipMemcpyDtoH
// from and into ordinary Go memory, the figures the Device's copies are held to.
func BenchmarkHipsysCopy256MiB(b *testing.B) {
	p, err := hipsys.Open("auto")
	require.NoError(b, err)
	ptr, err := p.Malloc(bigCopy)
	require.NoError(b, err)
	defer p.Free(ptr)
	data := make([]byte, bigCopy)
	require.NoError(b, p.MemcpyHtoD(ptr, data))
	b.Run("HtoD", func(b *testing.B) {
		b.SetBytes(bigCopy)
		for b.Loop() {
			if err := p.MemcpyHtoD(ptr, data); err != nil {
				b.Fatal(err)
			}
		}
		reportGBs(b)
	})
	b.Run("DtoH", func(b *testing.B) {
		b.SetBytes(bigCopy)
		for b.Loop() {
			if err := p.MemcpyDtoH(data, ptr); err != nil {
				b.Fatal(err)
			}
		}
		reportGBs(b)
	})
}

func reportGBs(b *testing.B) {
	b.ReportMetric(float64(bigCopy)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// rawKernel loads k by hand on a fresh stream of the auto platform: the hipsys side of
// the side-by-side benchmarks.
func rawKernel(b testing.TB, k *server.Kernel) (hipsys.Platform, hipsys.Stream, hipsys.Function) {
	p, err := hipsys.Open("auto")
	require.NoError(b, err)
	prog, err := p.RTCCreateProgram(k.Source(), k.Entry()+".hip", nil)
	require.NoError(b, err)
	require.NoError(b, p.RTCCompileProgram(prog, nil))
	code, err := p.RTCGetCode(prog)
	require.NoError(b, err)
	require.NoError(b, p.RTCDestroyProgram(prog))
	mod, err := p.ModuleLoadData(code)
	require.NoError(b, err)
	fn, err := p.ModuleGetFunction(mod, k.Entry())
	require.NoError(b, err)
	sys, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	b.Cleanup(func() {
		_ = p.StreamSynchronize(sys)
		_ = p.StreamDestroy(sys)
		_ = p.ModuleUnload(mod)
	})
	return p, sys, fn
}

// TestDeviceLaunchAllocatesNothing holds the Device to the zero-allocation budget of a
// steady-state launch with buffer, scalar and info arguments. The platform's own queue
// may allocate (the cpu platform grows its recycled commands' parameter blocks), so the
// same loop straight through hipsys is measured too, and the Device may add nothing.
func TestDeviceLaunchAllocatesNothing(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := alloc(t, d.Stream, 256)
	args := server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(64)}}
	info := server.Args{Buffers: []*server.Buffer{x}, Info: []uint64{64, 1}}
	g := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	// One kind of launch per measurement: the cpu platform's recycled commands keep
	// their parameter blocks, and one that held a shorter block grows when reused.
	device := steadyAllocs(t, func() { _ = d.Launch(devInc, g, args) }, func() { require.NoError(t, d.Sync()) }) +
		steadyAllocs(t, func() { _ = d.Launch(devIota, g, info) }, func() { require.NoError(t, d.Sync()) })

	p, sys, inc := rawKernel(t, devInc)
	_, _, iota := rawKernel(t, devIota)
	ptr, err := p.Malloc(256)
	require.NoError(t, err)
	defer p.Free(ptr)
	var a hipsys.KernelArgs
	sync := func() { require.NoError(t, p.StreamSynchronize(sys)) }
	raw := steadyAllocs(t, func() { _ = p.ModuleLaunchKernel(inc, g, devBlock, 0, sys, a.Reset().Ptr(ptr).U32(64)) }, sync) +
		steadyAllocs(t, func() { _ = p.ModuleLaunchKernel(iota, g, devBlock, 0, sys, a.Reset().Ptr(ptr).Ptr(ptr)) }, sync)
	t.Logf("allocations per two launches: device %.2f, hipsys %.2f", device, raw)
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	assert.LessOrEqual(t, device, raw)
}

// steadyAllocs is the allocations of one call of f after a deep queue of them warmed
// every free list on the way (sync drains it).
func steadyAllocs(t testing.TB, f, sync func()) float64 {
	for range 300 {
		f()
	}
	sync()
	allocs := testing.AllocsPerRun(100, f)
	sync()
	return allocs
}

// BenchmarkLayers holds the Device's launch and 4-byte read to raw hipsys calls in one
// process. Launch figures differ by up to 20% from one process to the next on the H200,
// and drift within one by several percent over a second or two, both more than the 5%
// budget: so the two sides run in short blocks, back to back, each going first in
// alternate rounds, and each figure is the median over rounds of a pair's ratio (x,
// with its quartiles x-q1 and x-q3), which a drift slower than a pair leaves alone. Run
// it with -test.benchtime=1x. launch-own holds the Device to the platform call it makes,
// on its own function and stream; launch-driver holds that call to the raw one, so
// launch-x ≈ launch-own-x × launch-driver-x splits the Device's Go cost from the driver's.
// On nvidia, launch-c holds the Device to the anchor's loop run in C: the budget itself.
func BenchmarkLayers(b *testing.B) {
	d := benchDevice(b)
	require.NoError(b, d.Compile(devEmpty))
	p, sys, fn := rawKernel(b, devEmpty)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	small := alloc(b, d.Stream, 4)
	require.NoError(b, d.Write(small, make([]byte, 4)))
	ptr, err := p.Malloc(4)
	require.NoError(b, err)
	defer p.Free(ptr)
	four := make([]byte, 4)
	loop := func(n int, op func() error, sync func() error) float64 {
		start := time.Now()
		for i := range n {
			if err := op(); err != nil {
				b.Fatal(err)
			}
			if i%syncEvery == syncEvery-1 {
				_ = sync()
			}
		}
		_ = sync()
		return float64(time.Since(start).Nanoseconds()) / float64(n) / 1e3
	}
	rawSync := func() error { return p.StreamSynchronize(sys) }
	devSync := func() error { return d.Sync() }
	type side struct {
		op, sync func() error
		block    func(n int) float64 // instead of op and sync: n launches and a sync, µs per launch
	}
	// The same driver call on the Device's own function and stream, under its queue
	// watch: what the Device adds is then its Go code alone, and what the raw pair
	// differs by besides is the driver's (a function or stream of its own).
	inner, dfn, dsys, err := server.LaunchTarget(d, devEmpty)
	require.NoError(b, err)
	innerLaunch := side{op: func() error { return inner.ModuleLaunchKernel(dfn, one, one, 0, dsys, nil) }, sync: devSync}
	rawLaunch := side{op: func() error { return p.ModuleLaunchKernel(fn, one, one, 0, sys, nil) }, sync: rawSync}
	pairs := []struct {
		name        string
		n           int
		device, raw side
	}{
		{"launch", 2000,
			side{op: func() error { return d.Launch(devEmpty, one, server.Args{}) }, sync: devSync}, rawLaunch},
		{"launch-own", 2000,
			side{op: func() error { return d.Launch(devEmpty, one, server.Args{}) }, sync: devSync}, innerLaunch},
		{"launch-driver", 2000, innerLaunch, rawLaunch},
		{"read", 500,
			side{op: func() error { return d.ReadInto(four, small) }, sync: devSync},
			side{op: func() error { return p.MemcpyDtoH(four, ptr) }, sync: rawSync}},
		// What a synchronous caller pays: a launch and a wait for it, a launch and a
		// 4-byte read of what it wrote.
		{"launch-sync", 500,
			side{op: func() error { _ = d.Launch(devEmpty, one, server.Args{}); return d.Sync() }, sync: devSync},
			side{op: func() error { _ = p.ModuleLaunchKernel(fn, one, one, 0, sys, nil); return p.StreamSynchronize(sys) }, sync: rawSync}},
		{"launch-read", 500,
			side{op: func() error { _ = d.Launch(devEmpty, one, server.Args{}); return d.ReadInto(four, small) }, sync: devSync},
			side{op: func() error { _ = p.ModuleLaunchKernel(fn, one, one, 0, sys, nil); return p.MemcpyDtoH(four, ptr) }, sync: rawSync}},
		// The same pair against the driver calls on the Device's own function and stream
		// (one CUDA stream's launch + sync differs from another's by up to 0.9 µs on an
		// H200), then with one of the two calls the Device's: which of them costs what.
		{"launch-sync-own", 500,
			side{op: func() error { _ = d.Launch(devEmpty, one, server.Args{}); return d.Sync() }, sync: devSync},
			side{op: func() error {
				_ = inner.ModuleLaunchKernel(dfn, one, one, 0, dsys, nil)
				return inner.StreamSynchronize(dsys)
			}, sync: devSync}},
		{"launch-own-sync-raw", 500,
			side{op: func() error { _ = d.Launch(devEmpty, one, server.Args{}); return inner.StreamSynchronize(dsys) }, sync: devSync},
			side{op: func() error {
				_ = inner.ModuleLaunchKernel(dfn, one, one, 0, dsys, nil)
				return inner.StreamSynchronize(dsys)
			}, sync: devSync}},
		{"launch-raw-sync-own", 500,
			side{op: func() error { _ = inner.ModuleLaunchKernel(dfn, one, one, 0, dsys, nil); return d.Sync() }, sync: devSync},
			side{op: func() error {
				_ = inner.ModuleLaunchKernel(dfn, one, one, 0, dsys, nil)
				return inner.StreamSynchronize(dsys)
			}, sync: devSync}},
	}
	// A checked launch in the kernel's own order (scalars first), against the same
	// driver call on the Device's function and stream: the check and the reordering
	// are the Device's Go cost (the parameters are listed by the test's table where the
	// platform does not list them itself).
	{
		dc := openChecked(b)
		x, y := alloc(b, dc.Stream, 16), alloc(b, dc.Stream, 16)
		require.NoError(b, dc.Compile(argSaxpy))
		cp, cfn, csys, err := server.LaunchTarget(dc, argSaxpy)
		require.NoError(b, err)
		xp, err := cp.Malloc(16)
		require.NoError(b, err)
		defer cp.Free(xp)
		var ka hipsys.KernelArgs
		cSync := func() error { return dc.Sync() }
		pairs = append(pairs, struct {
			name        string
			n           int
			device, raw side
		}{"call-own", 2000,
			side{op: func() error { return dc.Call(argSaxpy, one, server.I32(0), server.F32(1), x.Arg(), y.Arg()) }, sync: cSync},
			side{op: func() error {
				return cp.ModuleLaunchKernel(cfn, one, devBlock, 0, csys, ka.Reset().I32(0).F32(1).Ptr(xp).Ptr(xp))
			}, sync: cSync}})
	}
	// The Device against the anchor's loop in C, on the Device's own function and
	// stream: the budget's comparison, in one process (nvidia only: the loop is its).
	c, err := rawdriver.For(p)
	require.NoError(b, err)
	if c != nil {
		pairs = append(pairs, struct {
			name        string
			n           int
			device, raw side
		}{"launch-c", 1000, // under syncEvery: one sync per block, as the C loop
			side{op: func() error { return d.Launch(devEmpty, one, server.Args{}) }, sync: devSync},
			side{block: func(n int) float64 {
				t, err := c.LaunchLoop(dfn, dsys, n)
				require.NoError(b, err)
				return float64(t.Nanoseconds()) / float64(n) / 1e3
			}}})
	}
	run := func(n int, s side) float64 {
		if s.block != nil {
			return s.block(n)
		}
		return loop(n, s.op, s.sync)
	}
	const rounds = 101
	for _, pr := range pairs {
		res, err := paired.Run(rounds,
			func() (float64, error) { return run(pr.n, pr.device), nil },
			func() (float64, error) { return run(pr.n, pr.raw), nil })
		require.NoError(b, err)
		x := res.Ratio()
		b.ReportMetric(paired.Of(res.A).Median, "µs/"+pr.name+"-device")
		b.ReportMetric(paired.Of(res.B).Median, "µs/"+pr.name+"-hipsys")
		b.ReportMetric(x.Median, pr.name+"-x")
		b.ReportMetric(x.Q1, pr.name+"-x-q1")
		b.ReportMetric(x.Q3, pr.name+"-x-q3")
	}
}

// benchDevice opens the test platform's device 0 as users do, with no fault injector
// between the server and the platform, and closes it when the benchmark ends.
func benchDevice(b *testing.B) *server.Device {
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, err)
	b.Cleanup(func() { assert.NoError(b, d.Close()) })
	return d
}
