package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// BenchmarkCPUMemsetAsyncEnqueue is the queue's host cost without a kernel: one 8-byte
// MemsetAsync per iteration. It is the anchor for BenchmarkCPULaunchEnqueue (the
// difference is the launch's own checks and argument copy).
func BenchmarkCPUMemsetAsyncEnqueue(b *testing.B) {
	p := newTest(b)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	d, err := p.Malloc(8)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.MemsetAsync(d, byte(i), 8, h); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/op")
	require.NoError(b, p.StreamSynchronize(h))
	require.NoError(b, p.StreamDestroy(h))
	require.NoError(b, p.Free(d))
}

// BenchmarkCPUMemsetAsyncSync is one MemsetAsync and a StreamSynchronize: the round
// trip through the worker, anchor for BenchmarkCPULaunchSync.
func BenchmarkCPUMemsetAsyncSync(b *testing.B) {
	p := newTest(b)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	d, err := p.Malloc(8)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.MemsetAsync(d, byte(i), 8, h); err != nil {
			b.Fatal(err)
		}
		if err := p.StreamSynchronize(h); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/op")
	require.NoError(b, p.StreamDestroy(h))
	require.NoError(b, p.Free(d))
}

// BenchmarkCPUGraphReplay launches a captured 10-node graph of small memsets and waits.
func BenchmarkCPUGraphReplay(b *testing.B) {
	p := newTest(b)
	h, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	d, err := p.Malloc(8)
	require.NoError(b, err)
	require.NoError(b, p.StreamBeginCapture(h, hipsys.CaptureModeGlobal))
	for i := 0; i < 10; i++ {
		require.NoError(b, p.MemsetAsync(d, byte(i), 8, h))
	}
	g, err := p.StreamEndCapture(h)
	require.NoError(b, err)
	x, err := p.GraphInstantiate(g)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.GraphLaunch(x, h); err != nil {
			b.Fatal(err)
		}
		if err := p.StreamSynchronize(h); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "µs/replay")
	require.NoError(b, p.GraphExecDestroy(x))
	require.NoError(b, p.GraphDestroy(g))
	require.NoError(b, p.StreamDestroy(h))
	require.NoError(b, p.Free(d))
}
