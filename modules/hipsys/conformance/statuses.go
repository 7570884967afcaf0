package conformance

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cubehip/cubehip/modules/hipsys"
)

// expect asserts that err is the *hipsys.Error of call on this platform, with one of
// the statuses in want. Most checks pass one status; a set is for the places where HIP
// on AMD and HIP's mapping onto CUDA return different numbers for the same failure, and
// every such set is justified where it is used. It reports whether the check held.
func (s *suite) expect(t *testing.T, err error, call string, want ...hipsys.Status) bool {
	t.Helper()
	var he *hipsys.Error
	if !errors.As(err, &he) {
		return assert.Fail(t, "expected a *hipsys.Error", "%s: want one of %v, got %v", call, names(want), err)
	}
	ok := assert.Equal(t, call, he.Call, "the error names the HIP call (the fault injector keys on it)")
	ok = assert.Equal(t, s.p.Name(), he.Platform, "the error names the platform") && ok
	for _, w := range want {
		if he.Status == w {
			return ok
		}
	}
	return assert.Fail(t, "unexpected status", "%s: want one of %v, got %s (%v)", call, names(want), he.Status.Name(), err)
}

// expectRTC is expect for a hiprtc call's result.
func (s *suite) expectRTC(t *testing.T, err error, call string, want hipsys.RTCStatus) bool {
	t.Helper()
	var he *hipsys.Error
	if !errors.As(err, &he) {
		return assert.Fail(t, "expected a *hipsys.Error", "%s: want %s, got %v", call, want.Name(), err)
	}
	ok := assert.Equal(t, call, he.Call)
	ok = assert.Equal(t, s.p.Name(), he.Platform) && ok
	return assert.Equal(t, want.Name(), he.RTCStatus.Name(), "%s: %v", call, err) && ok
}

func names(st []hipsys.Status) []string {
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = s.Name()
	}
	return out
}

// Status sets used in more than one place.
var (
	// A destroyed or invented handle. AMD's HIP validates handles and says
	// hipErrorInvalidHandle (400, which is also CUDA's INVALID_HANDLE, so the nvidia
	// mapping gives the same number); some ROCm calls check the argument first and say
	// hipErrorInvalidValue; CUDA says CONTEXT_IS_DESTROYED for a handle whose context went.
	badHandle = []hipsys.Status{hipsys.ErrorInvalidHandle, hipsys.ErrorInvalidValue, hipsys.ErrorContextIsDestroyed}

	// An impossible launch shape. CUDA's cuLaunchKernel says INVALID_VALUE (1) for a zero
	// or oversized dimension; AMD's HIP says hipErrorInvalidConfiguration for some shapes
	// and hipErrorInvalidValue for others.
	badLaunch = []hipsys.Status{hipsys.ErrorInvalidConfiguration, hipsys.ErrorInvalidValue}
)
