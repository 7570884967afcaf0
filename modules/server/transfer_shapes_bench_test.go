//go:build linux

package server_test

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/paired"
	"github.com/cubehip/cubehip/modules/server"
)

// BenchmarkTransferShapes measures 256 MiB reads and writes between device memory and
// reused pageable Go memory through staging rings of several shapes (chunk size × depth),
// each paired round by round with the host's memcpy on every core, as
// BenchmarkTransfer256MiB is: it is what the defaults (Options.StagingChunk,
// StagingDepth) were chosen from. Run it with -test.benchtime=1x.
func BenchmarkTransferShapes(b *testing.B) {
	src := make([]byte, bigCopy)
	for i := range src {
		src[i] = byte(i * 13)
	}
	dst := make([]byte, bigCopy)
	copy(dst, src)
	threads := runtime.GOMAXPROCS(0)
	anchor := func() (float64, error) {
		start := time.Now()
		copyOn(threads, dst, src)
		return time.Since(start).Seconds(), nil
	}
	for _, shape := range []struct {
		chunk uint64
		depth int
	}{{8 << 20, 3}, {8 << 20, 6}, {16 << 20, 3}, {16 << 20, 4}, {32 << 20, 3}, {4 << 20, 8}} {
		d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler), StagingChunk: shape.chunk, StagingDepth: shape.depth})
		require.NoError(b, err)
		buf := alloc(b, d.Stream, bigCopy)
		require.NoError(b, d.Write(buf, src))
		require.NoError(b, d.Sync())
		name := fmt.Sprintf("c%dMiB-d%d", shape.chunk>>20, shape.depth)
		for _, side := range []struct {
			what string
			op   func() error
		}{
			{"write", func() error {
				if err := d.Write(buf, src); err != nil {
					return err
				}
				return d.Sync()
			}},
			{"read", func() error { return d.ReadInto(dst, buf) }},
		} {
			res, err := paired.Run(5, anchor, func() (float64, error) {
				start := time.Now()
				err := side.op()
				return time.Since(start).Seconds(), err
			})
			require.NoError(b, err)
			b.ReportMetric(bigCopy/paired.Of(res.B).Median/1e9, name+"-"+side.what+"-GB/s")
			b.ReportMetric(res.Ratio().Median, name+"-"+side.what+"-x")
		}
		require.NoError(b, d.Close())
	}
}
