package main

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/hipsys/nvidia/rawdriver"
	"github.com/cubehip/cubehip/modules/hipsys/paired"
)

const emptyKernel = `extern "C" __global__ void empty() {}`

// BenchmarkABIvsDriver holds a C host's loops through libcubehip to the raw CUDA driver
// API's own C loops, in the same process, round by round: launch throughput, launch +
// sync, a 10-kernel graph's replay and a 4-byte read (the budgets: within 5%, 5%, 5% and
// 15%). x is ABI ÷ driver, the median of the rounds. It needs the nvidia platform.
//
// The driver's loops run as a C host's would: on the thread that makes the ABI's calls
// (the bench thread), on the ABI device's own stream 0 (its native handle). One CUDA
// stream's launch + sync differs from another's in one process by up to 0.9 µs on an
// H200, either way, which is a tenth of the loop and would land on one side of each pair;
// the driver keeps per-thread state too. x-gothread is the same pair with the driver's
// loops on the Go thread that drives the benchmark (pinned to the same core), x-fresh
// with them there on a stream of their own.
func BenchmarkABIvsDriver(b *testing.B) {
	// The setup's failure messages are the OS thread's last error (lasterror_test.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := hipsys.Open("nvidia")
	if err != nil {
		b.Skipf("needs the nvidia platform: %v", err)
	}
	drv, err := rawdriver.For(p)
	if err != nil || drv == nil {
		b.Skipf("needs the raw CUDA driver: %v", err)
	}
	// The driver's side: the same kernel, compiled and loaded through hipsys.
	prog, err := p.RTCCreateProgram(emptyKernel, "empty.hip", nil)
	require.NoError(b, err)
	require.NoError(b, p.RTCCompileProgram(prog, nil))
	code, err := p.RTCGetCode(prog)
	require.NoError(b, err)
	mod, err := p.ModuleLoadData(code)
	require.NoError(b, err)
	fn, err := p.ModuleGetFunction(mod, "empty")
	require.NoError(b, err)
	st, err := p.StreamCreateWithFlags(hipsys.StreamNonBlocking)
	require.NoError(b, err)
	ptr, err := p.Malloc(4)
	require.NoError(b, err)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	require.NoError(b, p.StreamBeginCapture(st, hipsys.CaptureModeGlobal))
	for range 10 {
		require.NoError(b, p.ModuleLaunchKernel(fn, one, one, 0, st, nil))
	}
	gr, err := p.StreamEndCapture(st)
	require.NoError(b, err)
	exec, err := p.GraphInstantiate(gr)
	require.NoError(b, err)

	// The ABI's side.
	dev, s := abiOpen("nvidia")
	require.EqualValues(b, 0, s, "%s", lastError())
	defer abiClose(dev)
	k, s := abiKernel(dev, emptyKernel, "empty", nil, 1)
	require.EqualValues(b, 0, s, "%s", lastError())
	require.EqualValues(b, 0, abiCall(0, dev, 0, 4, 0, nil, nil, 0), "%s", lastError())
	buf := newestHandle()
	require.EqualValues(b, 0, abiLaunchNone(k, 0), "%s", lastError()) // compiled before the capture
	require.EqualValues(b, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0), "%s", lastError())
	require.EqualValues(b, 0, abiCall(13, dev, 0, 0, 0, nil, nil, 0), "%s", lastError())
	for range 10 {
		require.EqualValues(b, 0, abiLaunchNone(k, 0), "%s", lastError())
	}
	require.EqualValues(b, 0, abiCall(14, dev, 0, 0, 0, nil, nil, 0), "%s", lastError())
	graph := newestHandle()
	// The driver's loops run on a device stream of the ABI's own (stream 1), not on the
	// one the ABI's loops use (stream 0): a stream whose native handle is handed out is
	// shared, and the Device then waits on it the driver's way only, so taking stream 0's
	// handle would measure that, not the ABI's own path.
	native, s := abiNativeStream(dev, 1)
	require.EqualValues(b, 0, s, "%s", lastError())
	own := hipsys.Stream(native)
	drvGo, drv := drv, drv.On(onBenchThread)

	type pair struct {
		name   string
		n      int
		abi    func(n int) (float64, error) // ns per operation
		driver func(d *rawdriver.Driver, n int, st hipsys.Stream) (float64, error)
	}
	perOp := func(d time.Duration, err error, n int) (float64, error) {
		return float64(d.Nanoseconds()) / float64(n), err
	}
	pairs := []pair{
		{"launch", 2000, func(n int) (float64, error) { return benchC(benchLaunch, dev, 0, k, n) },
			func(drv *rawdriver.Driver, n int, st hipsys.Stream) (float64, error) {
				d, err := drv.LaunchLoop(fn, st, n)
				return perOp(d, err, n)
			}},
		{"launch+sync", 500, func(n int) (float64, error) { return benchC(benchLaunchSync, dev, 0, k, n) },
			func(drv *rawdriver.Driver, n int, st hipsys.Stream) (float64, error) {
				d, err := drv.LaunchSyncLoop(fn, st, n)
				return perOp(d, err, n)
			}},
		{"replay10", 500, func(n int) (float64, error) { return benchCGraph(benchReplay, dev, 0, k, graph, n) },
			func(drv *rawdriver.Driver, n int, st hipsys.Stream) (float64, error) {
				d, err := drv.GraphLoop(exec, st, n)
				return perOp(d, err, n)
			}},
		// A blocking copy takes no stream.
		{"read4", 500, func(n int) (float64, error) { return benchC(benchRead4, dev, buf, k, n) },
			func(drv *rawdriver.Driver, n int, _ hipsys.Stream) (float64, error) {
				d, err := drv.ReadLoop(ptr, n)
				return perOp(d, err, n)
			}},
	}
	for _, pr := range pairs {
		b.Run(pr.name, func(b *testing.B) {
			for range b.N {
				_, err := pr.abi(pr.n)
				require.NoError(b, err)
				_, err = pr.driver(drv, pr.n, own)
				require.NoError(b, err)
				abi := func() (float64, error) { return pr.abi(pr.n) }
				onThread := func() (float64, error) { return pr.driver(drv, pr.n, own) }
				onGo := func() (float64, error) { return pr.driver(drvGo, pr.n, own) }
				onFresh := func() (float64, error) { return pr.driver(drvGo, pr.n, st) }
				var res, gothread, fresh paired.Result
				cpu := pinned(func() {
					if res, err = paired.Run(51, abi, onThread); err != nil {
						return
					}
					if gothread, err = paired.Run(31, abi, onGo); err == nil {
						fresh, err = paired.Run(21, abi, onFresh)
					}
				})
				require.NoError(b, err)
				b.ReportMetric(float64(cpu), "core")
				b.ReportMetric(fresh.Ratio().Median, "x-fresh")
				b.ReportMetric(gothread.Ratio().Median, "x-gothread")
				b.ReportMetric(res.Ratio().Median, "x")
				b.ReportMetric(paired.Of(res.A).Median/1e3, "abi-µs")
				b.ReportMetric(paired.Of(res.B).Median/1e3, "driver-µs")
				b.ReportMetric(paired.Of(gothread.B).Median/1e3, "driver-gothread-µs")
			}
		})
	}
}
