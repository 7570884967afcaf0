package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
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
