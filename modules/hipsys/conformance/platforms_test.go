package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	_ "github.com/cubehip/cubehip/modules/hipsys/amd"
	"github.com/cubehip/cubehip/modules/hipsys/conformance"
	_ "github.com/cubehip/cubehip/modules/hipsys/cpu"
	"github.com/cubehip/cubehip/modules/hipsys/faults"
	_ "github.com/cubehip/cubehip/modules/hipsys/nvidia"
)

// cpu opens the cpu platform, which is always there: failing to open it is a failure,
// not a skip.
func cpu(t *testing.T) hipsys.Platform {
	t.Helper()
	p, err := hipsys.Open("cpu")
	require.NoError(t, err)
	return p
}

// gpu opens a GPU platform, or skips: this machine may have no such device (the suite
// runs on GPU machines for them).
func gpu(t *testing.T, name string) hipsys.Platform {
	t.Helper()
	p, err := hipsys.Open(name)
	if err != nil {
		t.Skipf("platform %s unavailable: %v", name, err)
	}
	if n, err := p.GetDeviceCount(); err != nil || n == 0 {
		t.Skipf("platform %s has no device (count %d, %v)", name, n, err)
	}
	return p
}

func TestCPU(t *testing.T) { conformance.Run(t, cpu(t)) }

// TestFaultsPassThrough holds the fault wrapper to the same suite with nothing armed:
// a wrapper that changed any argument, result or error on its way through would fail it.
// The wrapper's counters then show that the suite made every HIP call of the Platform
// interface at least once.
func TestFaultsPassThrough(t *testing.T) {
	p := cpu(t)
	w := faults.Wrap(p)
	conformance.Run(t, w)
	// The calls of optional capabilities the cpu platform does not have are never made
	// through the wrapper here (the server's tests over nvidia make them).
	_, queue := hipsys.As[hipsys.LaunchQueuer](p)
	_, flags := hipsys.As[hipsys.FlagWaiter](p)
	_, copies := hipsys.As[hipsys.FlaggingCopier](p)
	absent := map[string]bool{
		"hipOpenLaunchQueue":           !queue,
		"hipModuleLaunchKernelFlagged": !flags,
		"hipStreamWaitFlag":            !flags,
		"hipMemcpyDtoHAsyncFlagged":    !copies,
	}
	for _, name := range faults.Names() {
		if absent[name] {
			continue
		}
		assert.Positive(t, w.Calls(name), "the suite never calls %s", name)
	}
}

func TestNvidia(t *testing.T) { conformance.Run(t, gpu(t, "nvidia")) }

func TestAMD(t *testing.T) { conformance.Run(t, gpu(t, "amd")) }
