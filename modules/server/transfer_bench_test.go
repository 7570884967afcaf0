//go:build linux

package server_test

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/paired"
	"github.com/cubehip/cubehip/modules/server"
)

// BenchmarkTransfer256MiB holds the Device's large copies between device memory and
// pageable host memory to the host's own memcpy, in one process: the budget is a ratio
// to what the host's cores can copy, so both sides must be measured on the same machine
// at the same moment. Run it with -test.benchtime=1x (each figure is its own rounds).
//
// The anchor is a copy of 256 MiB between two Go buffers already touched, on 1 thread
// (memcpy1-GB/s) and on every core the Go runtime may use (memcpyN-GB/s, threads). Each
// Device figure is paired with the N-thread copy round by round (paired.Run), and its
// -x is the median of the rounds' rate ratios, Device ÷ anchor:
//
//   - write: Write of 256 MiB from reused Go memory, then Sync (done means on the device);
//   - read: ReadInto of 256 MiB into reused Go memory;
//   - read-fresh: Read, which returns a new []byte, with the heap handed back to the OS
//     before each round (untimed), so the new slice's pages are not resident: the Go
//     runtime zeroes a reused span before Read sees it (on one thread, faulting the
//     pages in), where memory new to the heap it hands over untouched;
//   - read-mmap: ReadInto memory just mapped from the OS, never touched: a fresh numpy
//     array or malloc'ed C buffer of that size is exactly this;
//   - read-c8, write-c8: read and write through staging chunks of 8 MiB instead of 16
//     (Options.StagingChunk), on a Device of their own;
//   - read-1t, write-1t: read and write with GOMAXPROCS 1, so that the host side of the
//     copies runs on one thread: what spreading it over the cores buys (on the cpu
//     platform the device's side shares that one core too).
//
// Two host-only figures say what the OS charges for fresh pages on this machine, on N
// threads: fresh-touch copies into a fresh mapping (4 KiB page faults), fresh-huge into
// one advised MADV_HUGEPAGE first (the kernel's transparent huge pages, when it allows
// them). They bound what any read into fresh memory can do here.
func BenchmarkTransfer256MiB(b *testing.B) {
	d := benchDevice(b)
	buf := alloc(b, d.Stream, bigCopy)
	src := make([]byte, bigCopy)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst := make([]byte, bigCopy)
	copy(dst, src)
	require.NoError(b, d.Write(buf, src))
	require.NoError(b, d.Sync())
	threads := runtime.GOMAXPROCS(0)
	// A second Device whose staging chunks are 8 MiB, the default before 16: a chunk
	// splits into 8 parts of 1 MiB, where 16 cores copy 16 of a 16 MiB chunk.
	d8, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler), StagingChunk: 8 << 20})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, d8.Close()) })
	buf8 := alloc(b, d8.Stream, bigCopy)
	require.NoError(b, d8.Write(buf8, src))

	timed := func(op func() error) (float64, error) {
		start := time.Now()
		err := op()
		return time.Since(start).Seconds(), err
	}
	anchor := func(n int) paired.Side {
		return func() (float64, error) {
			return timed(func() error { copyOn(n, dst, src); return nil })
		}
	}
	freshMap := func() []byte {
		m, err := syscall.Mmap(-1, 0, bigCopy, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		require.NoError(b, err)
		return m
	}
	unmap := func(m []byte) { require.NoError(b, syscall.Munmap(m)) }
	var last []byte // read-fresh's result, dropped before the next round
	sides := []struct {
		name string
		op   paired.Side
	}{
		{"write", func() (float64, error) {
			return timed(func() error {
				if err := d.Write(buf, src); err != nil {
					return err
				}
				return d.Sync()
			})
		}},
		{"read", func() (float64, error) { return timed(func() error { return d.ReadInto(dst, buf) }) }},
		{"read-c8", func() (float64, error) { return timed(func() error { return d8.ReadInto(dst, buf8) }) }},
		{"write-c8", func() (float64, error) {
			return timed(func() error {
				if err := d8.Write(buf8, src); err != nil {
					return err
				}
				return d8.Sync()
			})
		}},
		// The same with the Go runtime on one core: what the host copies' threads buy.
		{"read-1t", func() (float64, error) {
			return oneCore(func() (float64, error) { return timed(func() error { return d.ReadInto(dst, buf) }) })
		}},
		{"write-1t", func() (float64, error) {
			return oneCore(func() (float64, error) {
				return timed(func() error {
					if err := d.Write(buf, src); err != nil {
						return err
					}
					return d.Sync()
				})
			})
		}},
		{"read-fresh", func() (float64, error) {
			last = nil
			debug.FreeOSMemory()
			return timed(func() error {
				var err error
				last, err = d.Read(buf)
				return err
			})
		}},
		{"read-mmap", func() (float64, error) {
			m := freshMap()
			defer unmap(m)
			return timed(func() error { return d.ReadInto(m, buf) })
		}},
		{"fresh-touch", func() (float64, error) {
			m := freshMap()
			defer unmap(m)
			return timed(func() error { copyOn(threads, m, src); return nil })
		}},
		{"fresh-huge", func() (float64, error) {
			m := freshMap()
			defer unmap(m)
			return timed(func() error {
				// EINVAL where the kernel has no transparent huge pages: then this is
				// fresh-touch again, which the figure shows.
				_ = syscall.Madvise(m, syscall.MADV_HUGEPAGE)
				copyOn(threads, m, src)
				return nil
			})
		}},
	}

	const rounds = 7
	// The anchor alone first: its rates are the figures the ratios are taken against.
	for _, n := range []int{1, threads} {
		var t []float64
		for range rounds {
			s, _ := anchor(n)()
			t = append(t, s)
		}
		name := "memcpyN-GB/s"
		if n == 1 {
			name = "memcpy1-GB/s"
		}
		b.ReportMetric(bigCopy/paired.Of(t).Median/1e9, name)
	}
	b.ReportMetric(float64(threads), "threads")
	for _, s := range sides {
		// Ratio of times anchor ÷ side: the side's rate over the anchor's.
		res, err := paired.Run(rounds, anchor(threads), s.op)
		require.NoError(b, err)
		b.ReportMetric(bigCopy/paired.Of(res.B).Median/1e9, s.name+"-GB/s")
		b.ReportMetric(res.Ratio().Median, s.name+"-x")
	}
	require.Len(b, last, bigCopy)
	require.Equal(b, src[:4096], last[:4096])
	require.Equal(b, src[bigCopy-4096:], dst[bigCopy-4096:])
}

// oneCore runs op with GOMAXPROCS 1.
func oneCore(op paired.Side) (float64, error) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	return op()
}

// copyOn is copy(dst, src) split evenly over n goroutines: the host's multi-thread
// memcpy, the anchor.
func copyOn(n int, dst, src []byte) {
	step := (len(dst)/n + 4095) &^ 4095
	var wg sync.WaitGroup
	for lo := 0; lo < len(dst); lo += step {
		hi := min(lo+step, len(dst))
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}
