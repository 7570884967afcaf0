package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// instantDriver is the cpu platform with the calls a launch + sync and a small read make
// to the driver returning at once, doing nothing: a Device over it costs its own Go code
// alone, on any machine. launched and synced are when the last launch reached the driver
// and when the last stream wait left it.
type instantDriver struct {
	hipsys.Platform
	launched, synced time.Time
}

func (d *instantDriver) ModuleLaunchKernel(hipsys.Function, hipsys.Dim3, hipsys.Dim3, uint32, hipsys.Stream, *hipsys.KernelArgs) error {
	d.launched = time.Now()
	return nil
}

func (d *instantDriver) StreamSynchronize(hipsys.Stream) error {
	d.synced = time.Now()
	return nil
}

func (d *instantDriver) MemcpyDtoH([]byte, hipsys.DevicePtr) error { return nil }

// BenchmarkDeviceOwnCost is what the Device's Go code costs a launch + sync and a 4-byte
// read, with a driver that takes no time. On a GPU, the part of a launch + sync that
// delays the caller is the Device's work before the launch reaches the driver and after
// the wait leaves it: the rest runs while the GPU runs the kernel. critical reports those
// two parts (pre-launch-ns, post-sync-ns, each less one clock read).
func BenchmarkDeviceOwnCost(b *testing.B) {
	p, err := hipsys.Open("cpu")
	require.NoError(b, err)
	drv := &instantDriver{Platform: p}
	d, err := server.OpenPlatform(drv, server.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, d.Close()) })
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(b, d.Compile(devEmpty))
	small := alloc(b, d.Stream, 4)
	four := make([]byte, 4)
	require.NoError(b, d.Sync())
	b.Run("launch+sync", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Launch(devEmpty, one, server.Args{}); err != nil {
				b.Fatal(err)
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read4", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := d.ReadInto(four, small); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("critical", func(b *testing.B) {
		var pre, post time.Duration
		n := 0
		for b.Loop() {
			t0 := time.Now()
			_ = d.Launch(devEmpty, one, server.Args{})
			_ = d.Sync()
			t1 := time.Now()
			pre += drv.launched.Sub(t0)
			post += t1.Sub(drv.synced)
			n++
		}
		c0 := time.Now()
		for range n {
			_ = time.Now()
		}
		clock := float64(time.Since(c0).Nanoseconds()) / float64(n)
		b.ReportMetric(float64(pre.Nanoseconds())/float64(n)-clock, "pre-launch-ns")
		b.ReportMetric(float64(post.Nanoseconds())/float64(n)-clock, "post-sync-ns")
	})
}
