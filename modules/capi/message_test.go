package main

import (
	"math"
	"regexp"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// goisms are Go's words where a C host reads a message: Go type names, DeviceProps and
// Kernel field names, package prefixes, a capture step the C ABI does not have.
var goisms = regexp.MustCompile(`\b(float32|float64|u?int(8|16|32|64)) given|\(its IO\)|MaxGridSize|MaxThreads|` +
	`\bserver: |\bstream: |\bnil\b|prepare run|\*server\.|\bArg\b`)

// TestMessagesInCTerms: the messages of a set of failing calls (the launch checks the
// Device makes and the C ABI forwards, the C ABI's own checks) use C's terms and one
// prefix style, the failing function's name first.
func TestMessagesInCTerms(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, st := abiOpen("cpu")
	require.Zero(t, st, lastError())
	defer abiClose(dev)
	k, st := abiKernel(dev, `extern "C" __global__ void fill(unsigned* out, unsigned v) { out[threadIdx.x] = v; }`, "fill", []int32{2}, 1)
	require.Zero(t, st, lastError())
	buf, st := abiAlloc(dev, 0, 64)
	require.Zero(t, st, lastError())
	const u32, f64, i64 = 7, 11, 8 // CUBEHIP_ARG_U32, F64, I64
	calls := map[string]func() abiStatus{
		"a double for unsigned": func() abiStatus {
			return abiLaunchScalars(k, buf, 1, []int32{f64}, []uint64{math.Float64bits(1)})
		},
		"an int64_t for unsigned": func() abiStatus { return abiLaunchScalars(k, buf, 1, []int32{i64}, []uint64{1}) },
		"grid over the limit": func() abiStatus {
			return abiLaunchScalars(k, buf, math.MaxUint32, []int32{u32}, []uint64{1})
		},
		"one argument of two":    func() abiStatus { return abiLaunchOne(k, buf) },
		"made-up handle":         func() abiStatus { return abiCall(5, 1<<40, 0, 0, 0, nil, nil, 0) },
		"read out of bounds":     func() abiStatus { return abiCall(4, buf, 0, 60, 8, make([]byte, 8), nil, 0) },
		"capture end, none open": func() abiStatus { return abiCall(14, dev, 0, 0, 0, nil, nil, 3) },
		"allocation too big":     func() abiStatus { return abiCall(0, dev, 0, 1<<62, 0, nil, nil, 0) },
	}
	for name, call := range calls {
		st := call()
		require.NotZero(t, st, name)
		msg := lastError()
		require.Regexp(t, `^cubehip_[a-z_]+: `, msg, "%s: one prefix style, the function's name first", name)
		require.NotRegexp(t, goisms, msg, "%s: a Go term at the C ABI", name)
		t.Logf("%s: %s", name, msg)
	}
	// A launch's type mismatch names the argument and what was given, in C's words.
	require.NotZero(t, abiLaunchScalars(k, buf, 1, []int32{f64}, []uint64{math.Float64bits(1)}))
	require.Contains(t, lastError(), "argument 1")
	require.Contains(t, lastError(), "double given")
}
