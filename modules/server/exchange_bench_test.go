package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	"github.com/cubehip/cubehip/modules/server"
)

// BenchmarkExchange times the Device's side of handing memory to and from another
// library, the costs a DLPack exchange adds to the other library's own: an export of a
// buffer whose writes are done (OrderBefore on another library's stream, then the
// device pointer), and an import of another library's allocation, released and given
// back (Import, Release, the release callback). us-export and us-import are µs each.
func BenchmarkExchange(b *testing.B) {
	d := benchDevice(b)
	x := alloc(b, d.Stream, 1024)
	require.NoError(b, d.Sync())
	var theirs uint64 // the null stream, the other library's default (on cpu: a host wait)
	const n = 2000
	t0 := time.Now()
	for range n {
		require.NoError(b, x.OrderBefore(theirs))
		_, err := x.DevicePointer()
		require.NoError(b, err)
	}
	b.ReportMetric(float64(time.Since(t0).Microseconds())/n, "us-export")

	// The other library's memory: an allocation the Device did not make.
	p, err := hipsys.Open(d.Platform())
	require.NoError(b, err)
	mem, err := p.Malloc(1024)
	require.NoError(b, err)
	defer p.Free(mem)
	var released sync.WaitGroup
	imp := d.On(1)
	t0 = time.Now()
	for range n {
		released.Add(1)
		buf, err := imp.Import(mem, 1024, released.Done)
		require.NoError(b, err)
		require.NoError(b, buf.Release())
	}
	released.Wait()
	b.ReportMetric(float64(time.Since(t0).Microseconds())/n, "us-import")

	// The same with the release on the releasing goroutine (what the Python package asks for).
	t0 = time.Now()
	for range n {
		released.Add(1)
		buf, err := imp.Import(mem, 1024, released.Done, server.ReleaseOnCaller)
		require.NoError(b, err)
		require.NoError(b, buf.Release())
	}
	released.Wait()
	b.ReportMetric(float64(time.Since(t0).Microseconds())/n, "us-import-oncaller")
}

// BenchmarkExportOrdered is the export of BenchmarkExchange alone, in b.Loop (for a CPU
// profile of the Device's side): OrderBefore on the other library's stream, then the
// device pointer, of a buffer whose writes are done. On the cpu platform it runs through
// foreignCPU, whose streams stand for another library's.
func BenchmarkExportOrdered(b *testing.B) {
	d := benchDevice(b)
	var p hipsys.Platform
	if d.Platform() == "cpu" {
		var f *faults.Platform
		d, f = openForeignDevice(b, server.Options{})
		p = f.Unwrap()
	} else {
		var err error
		p, err = hipsys.Open(d.Platform())
		require.NoError(b, err)
	}
	theirs, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	defer func() { _ = p.StreamDestroy(theirs) }()
	x := alloc(b, d.Stream, 1024)
	require.NoError(b, d.Sync())
	for b.Loop() {
		if err := x.OrderBefore(uint64(theirs)); err != nil {
			b.Fatal(err)
		}
		if _, err := x.DevicePointer(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportReleased is BenchmarkExchange's import with the release on the caller
// alone, in b.Loop: Import of the other library's allocation, Release, the callback.
func BenchmarkImportReleased(b *testing.B) {
	d := benchDevice(b)
	p, err := hipsys.Open(d.Platform())
	require.NoError(b, err)
	mem, err := p.Malloc(1024)
	require.NoError(b, err)
	defer p.Free(mem)
	imp := d.On(1)
	released := 0
	for b.Loop() {
		buf, err := imp.Import(mem, 1024, func() { released++ }, server.ReleaseOnCaller)
		if err != nil {
			b.Fatal(err)
		}
		if err := buf.Release(); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, d.Sync())
}
