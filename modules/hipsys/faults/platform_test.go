package faults

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// fake is the tiny platform the rule tests wrap: Malloc hands out increasing addresses
// and counts what it allocated, so a test sees whether a call reached it.
type fake struct {
	absent
	allocs atomic.Int64
}

func (*fake) Name() string { return "fake" }

func (f *fake) Malloc(size uint64) (hipsys.DevicePtr, error) {
	if size == 0 {
		return 0, nil
	}
	return hipsys.DevicePtr(0x1000 * f.allocs.Add(1)), nil
}

func (f *fake) RTCCompileProgram(hipsys.Program, []string) error { return nil }

// outcome runs n Mallocs and reports which failed (true) and with what status.
func outcome(w *Platform, n int) ([]bool, []hipsys.Status) {
	failed := make([]bool, n)
	statuses := make([]hipsys.Status, n)
	for i := range n {
		_, err := w.Malloc(64)
		failed[i] = err != nil
		statuses[i] = hipsys.StatusOf(err)
	}
	return failed, statuses
}

func TestRules(t *testing.T) {
	oom := hipsys.ErrorOutOfMemory
	for _, tc := range []struct {
		name   string
		arm    func(w *Platform) bool
		failed []bool
	}{
		{"nothing armed", func(*Platform) bool { return true }, []bool{false, false, false, false}},
		{"always", func(w *Platform) bool { return w.Fail("hipMalloc", oom) }, []bool{true, true, true, true}},
		{"nth 1", func(w *Platform) bool { return w.FailNth("hipMalloc", 1, oom) }, []bool{true, false, false, false}},
		{"nth 3", func(w *Platform) bool { return w.FailNth("hipMalloc", 3, oom) }, []bool{false, false, true, false}},
		{"next 2", func(w *Platform) bool { return w.FailNext("hipMalloc", 2, oom) }, []bool{true, true, false, false}},
		{"other call armed", func(w *Platform) bool { return w.Fail("hipFree", oom) }, []bool{false, false, false, false}},
		{"rearm replaces", func(w *Platform) bool {
			return w.Fail("hipMalloc", oom) && w.FailNth("hipMalloc", 2, oom)
		}, []bool{false, true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			w := Wrap(f)
			require.True(t, tc.arm(w))
			failed, statuses := outcome(w, len(tc.failed))
			assert.Equal(t, tc.failed, failed)
			wantAllocs := 0
			for i, fl := range failed {
				if fl {
					assert.Equal(t, oom, statuses[i])
				} else {
					wantAllocs++
				}
			}
			assert.EqualValues(t, wantAllocs, f.allocs.Load(), "an injected failure must not reach the platform")
			assert.Equal(t, len(tc.failed), w.Calls("hipMalloc"))
		})
	}
}

func TestBadArming(t *testing.T) {
	w := Wrap(&fake{})
	assert.False(t, w.Fail("hipMaloc", hipsys.ErrorOutOfMemory), "misspelt name")
	assert.False(t, w.FailNth("hipMalloc", 0, hipsys.ErrorOutOfMemory))
	assert.False(t, w.FailNext("hipMalloc", -1, hipsys.ErrorOutOfMemory))
	assert.Zero(t, w.armed.Load())
	assert.Zero(t, w.Calls("hipMaloc"))
	w.Clear("hipMaloc") // no panic on an unknown name
}

func TestClearAndReset(t *testing.T) {
	w := Wrap(&fake{})
	w.Fail("hipMalloc", hipsys.ErrorOutOfMemory)
	w.Fail("hiprtcCompileProgram", hipsys.RTCErrorCompilation)
	w.Clear("hipMalloc")
	_, err := w.Malloc(8)
	assert.NoError(t, err)
	assert.ErrorIs(t, w.RTCCompileProgram(1, nil), hipsys.RTCErrorCompilation)
	w.Reset()
	assert.NoError(t, w.RTCCompileProgram(1, nil))
	assert.Zero(t, w.armed.Load(), "every rule disarmed")
	w.FailNext("hipMalloc", 1, hipsys.ErrorOutOfMemory)
	_, _ = w.Malloc(8)
	assert.Zero(t, w.armed.Load(), "a spent rule disarms itself")
}

func TestInjectedErrorShape(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status error
		want   hipsys.Error
	}{
		{"hip status", hipsys.ErrorInvalidValue, hipsys.Error{Status: hipsys.ErrorInvalidValue}},
		{"rtc status", hipsys.RTCErrorInvalidOption, hipsys.Error{RTCStatus: hipsys.RTCErrorInvalidOption}},
		{"success reads unknown", hipsys.Success, hipsys.Error{Status: hipsys.ErrorUnknown}},
		{"foreign error reads unknown", assert.AnError, hipsys.Error{Status: hipsys.ErrorUnknown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Wrap(&fake{})
			w.Fail("hiprtcCompileProgram", tc.status)
			err := w.RTCCompileProgram(1, nil)
			var he *hipsys.Error
			require.ErrorAs(t, err, &he)
			tc.want.Platform, tc.want.Call, tc.want.Detail = "fake", "hiprtcCompileProgram", Detail
			assert.Equal(t, tc.want, *he)
		})
	}
}

// TestConcurrent arms FailNext(k) and races many goroutines over it: exactly k calls
// fail, whatever the interleaving (run with -race).
func TestConcurrent(t *testing.T) {
	const goroutines, per, k = 8, 200, 37
	f := &fake{}
	w := Wrap(f)
	w.FailNext("hipMalloc", k, hipsys.ErrorOutOfMemory)
	var failures atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range per {
				if _, err := w.Malloc(8); err != nil {
					failures.Add(1)
				}
				_ = w.Calls("hipMalloc")
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, k, failures.Load())
	assert.EqualValues(t, goroutines*per-k, f.allocs.Load())
	assert.Equal(t, goroutines*per, w.Calls("hipMalloc"))
}

// TestDisarmedAllocatesNothing holds the wrapper to the hot-path budget: a call with
// nothing armed adds no allocation to the wrapped platform's.
func TestDisarmedAllocatesNothing(t *testing.T) {
	w := Wrap(&fake{})
	w.Fail("hipFree", hipsys.ErrorInvalidValue) // armed elsewhere: the slow path, still no alloc
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = w.Malloc(8) }))
	w.Reset()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = w.Malloc(8) }))
}

func BenchmarkDisarmedCall(b *testing.B) {
	w := Wrap(&fake{})
	for b.Loop() {
		_, _ = w.Malloc(8)
	}
}
