package nvidia

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// The benchmarks measure what bench/anchor.c measures with raw driver calls, with the
// same shapes (the empty PTX kernel, a non-blocking stream, 1 MiB allocations, 4-byte
// reads, 256 MiB pinned copies), so scripts/gpu-test.sh can set them side by side. Each
// reports its figure per operation in the anchor's unit.

type benchEnv struct {
	p     *Platform
	empty hipsys.Function
	st    hipsys.Stream
}

func setupBench(b *testing.B) benchEnv {
	p := device(b)
	m, err := p.ModuleLoadData([]byte(emptyPTX))
	require.NoError(b, err)
	b.Cleanup(func() { p.ModuleUnload(m) })
	f, err := p.ModuleGetFunction(m, "empty")
	require.NoError(b, err)
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	b.Cleanup(func() { p.StreamDestroy(st) })
	e := benchEnv{p, f, st}
	for range 100 { // warm the launch path and the JIT-compiled kernel
		require.NoError(b, e.launch())
	}
	require.NoError(b, p.StreamSynchronize(st))
	return e
}

var one = hipsys.Dim3{X: 1, Y: 1, Z: 1}

func (e benchEnv) launch() error { return e.p.ModuleLaunchKernel(e.empty, one, one, 0, e.st, nil) }

// perOp reports the elapsed time per operation in microseconds.
func perOp(b *testing.B, start time.Time, unit string) {
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/1e3/float64(b.N), unit)
}

func BenchmarkLaunch(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := e.launch(); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.p.StreamSynchronize(e.st); err != nil {
		b.Fatal(err)
	}
	perOp(b, start, "us/launch")
}

func BenchmarkLaunchSync(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := e.launch(); err != nil {
			b.Fatal(err)
		}
		if err := e.p.StreamSynchronize(e.st); err != nil {
			b.Fatal(err)
		}
	}
	perOp(b, start, "us/launchsync")
}

// graph captures 10 empty launches, instantiates and uploads them; it is destroyed
// when the benchmark ends.
func (e benchEnv) graph(b *testing.B) hipsys.GraphExec {
	p := e.p
	require.NoError(b, p.StreamBeginCapture(e.st, hipsys.CaptureModeRelaxed))
	for range 10 {
		require.NoError(b, e.launch())
	}
	g, err := p.StreamEndCapture(e.st)
	require.NoError(b, err)
	b.Cleanup(func() { p.GraphDestroy(g) })
	exec, err := p.GraphInstantiate(g)
	require.NoError(b, err)
	b.Cleanup(func() { p.GraphExecDestroy(exec) })
	require.NoError(b, p.GraphUpload(exec, e.st))
	require.NoError(b, p.StreamSynchronize(e.st))
	return exec
}

func BenchmarkGraphReplay(b *testing.B) {
	e := setupBench(b)
	p := e.p
	exec := e.graph(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := p.GraphLaunch(exec, e.st); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.StreamSynchronize(e.st); err != nil {
		b.Fatal(err)
	}
	perOp(b, start, "us/replay")
}

func BenchmarkAllocFree(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		d, err := e.p.Malloc(1 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.p.Free(d); err != nil {
			b.Fatal(err)
		}
	}
	perOp(b, start, "us/allocfree")
}

func BenchmarkRead4(b *testing.B) {
	e := setupBench(b)
	d, err := e.p.Malloc(4)
	require.NoError(b, err)
	defer e.p.Free(d)
	buf := make([]byte, 4)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := e.p.MemcpyDtoH(buf, d); err != nil {
			b.Fatal(err)
		}
	}
	perOp(b, start, "us/read")
}

const pinnedBytes = 256 << 20

func benchPinned(b *testing.B, up bool) {
	e := setupBench(b)
	p := e.p
	h, err := p.HostMalloc(pinnedBytes, hipsys.HostMallocDefault)
	require.NoError(b, err)
	defer p.HostFree(h)
	d, err := p.Malloc(pinnedBytes)
	require.NoError(b, err)
	defer p.Free(d)
	copyOnce := func() error {
		if up {
			return p.MemcpyHtoDAsync(d, h, pinnedBytes, e.st)
		}
		return p.MemcpyDtoHAsync(h, d, pinnedBytes, e.st)
	}
	require.NoError(b, copyOnce())
	require.NoError(b, p.StreamSynchronize(e.st))
	b.SetBytes(pinnedBytes)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := copyOnce(); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.StreamSynchronize(e.st); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(pinnedBytes)*float64(b.N)/time.Since(start).Seconds()/1e9, "GB/s")
}

func BenchmarkPinnedHtoD(b *testing.B) { benchPinned(b, true) }
func BenchmarkPinnedDtoH(b *testing.B) { benchPinned(b, false) }

// BenchmarkCgoCall is the floor under every figure above: one Go-to-C round trip that
// does no driver work (GetDevice reads the thread's device from C), so the cost the
// platform adds to a call can be read apart from the driver's.
func BenchmarkCgoCall(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := e.p.GetDevice(); err != nil {
			b.Fatal(err)
		}
	}
	perOp(b, start, "us/call")
}

// BenchmarkStreamQuery is the cheapest driver call on the launch path's checks (a
// handle lookup, the context check, a cgo call).
func BenchmarkStreamQuery(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := e.p.StreamQuery(e.st); err != nil {
			b.Fatal(err)
		}
	}
	perOp(b, start, "us/query")
}

// The Raw benchmarks run the anchor's loops in C inside this process (rawloop.go).

func BenchmarkRawLaunch(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	us, err := rawLaunchLoop(e.empty, e.st, b.N, false)
	require.NoError(b, err)
	b.ReportMetric(us/float64(b.N), "us/launch")
}

func BenchmarkRawLaunchSync(b *testing.B) {
	e := setupBench(b)
	b.ResetTimer()
	us, err := rawLaunchLoop(e.empty, e.st, b.N, true)
	require.NoError(b, err)
	b.ReportMetric(us/float64(b.N), "us/launchsync")
}

func BenchmarkRawGraphReplay(b *testing.B) {
	e := setupBench(b)
	exec := e.graph(b)
	b.ResetTimer()
	us, err := rawGraphLoop(exec, e.st, b.N)
	require.NoError(b, err)
	b.ReportMetric(us/float64(b.N), "us/replay")
}

func BenchmarkRawRead4(b *testing.B) {
	e := setupBench(b)
	d, err := e.p.Malloc(4)
	require.NoError(b, err)
	defer e.p.Free(d)
	b.ResetTimer()
	us, err := rawReadLoop(d, b.N)
	require.NoError(b, err)
	b.ReportMetric(us/float64(b.N), "us/read")
}
