package main

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys/paired"
)

// BenchmarkABI prices the C ABI: each call made by a C thread through libcubehip's
// exports, paired round by round with the same Device call made from Go in the same
// process. The metric that matters is crossing-ns, the median per-call difference (the
// budget: under 200 ns on the cpu platform, the waiting calls included); ratio is C ÷ Go.
func BenchmarkABI(b *testing.B) {
	// The setup's failure messages are the OS thread's last error (lasterror_test.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, s := abiOpen("")
	require.EqualValues(b, 0, s, "%s", lastError())
	defer abiClose(dev)
	k, s := abiKernel(dev, `extern "C" __global__ void k(int* p) { p[0] = 1; }`, "k", []int32{2}, 1)
	require.EqualValues(b, 0, s, "%s", lastError())
	require.EqualValues(b, 0, abiCall(0, dev, 0, 4, 0, nil, nil, 0), "%s", lastError())
	buf := newestHandle()
	const rounds, n = 31, 2000
	for op := benchOp(0); op < benchOps; op++ {
		b.Run(op.String(), func(b *testing.B) {
			for range b.N {
				// Warm both sides: compile, pools, the C thread's first entry.
				_, err := benchC(op, dev, buf, k, 200)
				require.NoError(b, err)
				_, err = benchGo(op, dev, buf, k, 200)
				require.NoError(b, err)
				side := func(f func(benchOp, uint64, uint64, uint64, int) (float64, error)) paired.Side {
					return func() (float64, error) { return f(op, dev, buf, k, n) }
				}
				var res paired.Result
				cpu := pinned(func() { res, err = paired.Run(rounds, side(benchC), side(benchGo)) })
				require.NoError(b, err)
				b.ReportMetric(float64(cpu), "core")
				diffs := make([]float64, len(res.A))
				for i := range diffs {
					diffs[i] = res.A[i] - res.B[i]
				}
				b.ReportMetric(paired.Of(diffs).Median, "crossing-ns")
				b.ReportMetric(res.Ratio().Median, "ratio")
				b.ReportMetric(paired.Of(res.A).Median/1e3, "c-µs")
				b.ReportMetric(paired.Of(res.B).Median/1e3, "go-µs")
			}
		})
	}
}

// TestLaunchAllocatesNothing: a launch through the ABI allocates nothing in steady state
// (the arguments are converted into pooled scratch, the handles looked up without a lock).
func TestLaunchAllocatesNothing(t *testing.T) {
	// The failure messages are the OS thread's last error (lasterror_test.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, s := abiOpen("cpu")
	require.EqualValues(t, 0, s)
	defer abiClose(dev)
	k, s := abiKernel(dev, `extern "C" __global__ void k(int* p) { p[0] = 1; }`, "k", []int32{2}, 1)
	require.EqualValues(t, 0, s)
	require.EqualValues(t, 0, abiCall(0, dev, 0, 4, 0, nil, nil, 0))
	buf := newestHandle()
	launch := func() {
		if st := abiLaunchOne(k, buf); st != 0 {
			panic(fmt.Sprint("launch: ", abiStatusName(st), ": ", lastError()))
		}
	}
	// The cpu device recycles a stream's finished commands, and allocates one only when a
	// backlog outgrows them. The warm-up builds a backlog larger than the measurement can,
	// whatever the machine's load: 3000 launches of a kernel that runs far longer than a
	// launch takes to queue, so they all wait at once, and are then all recycled.
	slow, s := abiKernel(dev, `extern "C" __global__ void slow(int* p) {
		volatile int x = 0;
		for (int i = 0; i < 20000; i++) x += i;
		p[0] = x;
	}`, "slow", []int32{2}, 1)
	require.EqualValues(t, 0, s)
	for range 3000 {
		if st := abiLaunchOne(slow, buf); st != 0 {
			t.Fatalf("warm-up launch: %s: %s", abiStatusName(st), lastError())
		}
	}
	require.EqualValues(t, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0))
	allocs := testing.AllocsPerRun(1000, launch)
	require.EqualValues(t, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0))
	// A typed buffer (an int32 one for int* p) beside a scalar: its first launch goes
	// through the Device's Call, which checks the buffer's element type; the launches that
	// repeat the checked types go as the others, boxing no argument.
	const dtypeI32 = 5 // CUBEHIP_DTYPE_I32
	kv, s := abiKernel(dev, `extern "C" __global__ void kv(int* p, int v) { p[0] = v; }`, "kv", nil, 1)
	require.EqualValues(t, 0, s, "%s", lastError())
	typed, s := abiAllocTyped(dev, 0, dtypeI32, 1)
	require.EqualValues(t, 0, s, "%s", lastError())
	typedLaunch := func() {
		if st := abiLaunchBufferI32(kv, typed, 7); st != 0 {
			panic(fmt.Sprint("typed launch: ", abiStatusName(st), ": ", lastError()))
		}
	}
	for range 3000 { // as the warm-up above, for this kernel
		typedLaunch()
	}
	require.EqualValues(t, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0))
	typedAllocs := testing.AllocsPerRun(1000, typedLaunch)
	require.EqualValues(t, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0))
	if !raceEnabled {
		require.Zero(t, allocs, "allocations per launch")
		require.Zero(t, typedAllocs, "allocations per launch of a typed buffer")
	}
	t.Logf("%.2f allocations per launch, %.2f of a typed buffer", allocs, typedAllocs)
}
