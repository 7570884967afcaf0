package main

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkABI prices the C ABI: each call made by a C thread through libcubehip's
// exports, paired round by round with the same Device call made from Go in the same
// process. The metric that matters is crossing-ns, the median per-call difference (the
// budget: under 200 ns on the cpu platform, the waiting calls included); ratio is C ÷ Go.
func BenchmarkABI(b *testing.B) {
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
				var diffs, ratios, cs, gos []float64
				for r := range rounds {
					var c, g time.Duration
					if r%2 == 0 {
						c, err = benchC(op, dev, buf, k, n)
						require.NoError(b, err)
						g, err = benchGo(op, dev, buf, k, n)
					} else {
						g, err = benchGo(op, dev, buf, k, n)
						require.NoError(b, err)
						c, err = benchC(op, dev, buf, k, n)
					}
					require.NoError(b, err)
					diffs = append(diffs, float64(c-g))
					ratios = append(ratios, float64(c)/float64(g))
					cs, gos = append(cs, float64(c)), append(gos, float64(g))
				}
				b.ReportMetric(median(diffs), "crossing-ns")
				b.ReportMetric(median(ratios), "ratio")
				b.ReportMetric(median(cs)/1e3, "c-µs")
				b.ReportMetric(median(gos)/1e3, "go-µs")
			}
		})
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestLaunchAllocatesNothing: a launch through the ABI allocates nothing in steady state
// (the arguments are converted into pooled scratch, the handles looked up without a lock).
func TestLaunchAllocatesNothing(t *testing.T) {
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
	// The cpu device recycles a stream's finished commands: warm it with more launches
	// than the measurement makes, so its free list serves them all.
	for range 3000 {
		launch()
	}
	require.EqualValues(t, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0))
	allocs := testing.AllocsPerRun(1000, launch)
	require.EqualValues(t, 0, abiCall(7, dev, 0, 0, 0, nil, nil, 0))
	if !raceEnabled {
		require.Zero(t, allocs, "allocations per launch")
	}
	t.Logf("%.2f allocations per launch", allocs)
}
