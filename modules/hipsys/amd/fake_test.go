package amd

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeLibrary builds testdata/fakehip.c (a stand-in libamdhip64 backed by malloc) with
// the given -D flags and returns its path. It needs a C compiler, which any cgo build has.
func fakeLibrary(t *testing.T, defines ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake libamdhip64:", err)
	}
	out := filepath.Join(t.TempDir(), "libamdhip64.so.5")
	args := append([]string{"-shared", "-fPIC", "-o", out, "testdata/fakehip.c"}, defines...)
	b, err := exec.Command(cc, args...).CombinedOutput()
	require.NoError(t, err, "building the fake library: %s", b)
	return out
}

// fakePlatform opens a Platform over a fake library; its hiprtc is absent on purpose.
func fakePlatform(t *testing.T, defines ...string) *Platform {
	t.Helper()
	lib, err := load([]string{fakeLibrary(t, defines...)}, []string{"libcubehip-no-such-hiprtc.so"})
	require.NoError(t, err)
	p := newPlatform(lib)
	t.Cleanup(func() { assertNoLiveHandles(t, p) })
	return p
}

// assertNoLiveHandles is how every fake-platform test ends: whatever it created, it
// released. Deferred releases run before cleanups, so they count as released.
func assertNoLiveHandles(t *testing.T, p *Platform) {
	t.Helper()
	live := map[string]int{
		"streams": p.streams.len(), "events": p.events.len(), "modules": p.modules.len(),
		"functions": p.functions.len(), "graphs": p.graphs.len(), "graph execs": p.execs.len(),
		"graph nodes": p.nodes.len(), "programs": p.programs.len(),
		"device allocations": p.device.len(), "pinned allocations": p.host.len(),
		"parameter tables": p.params.len(),
	}
	for what, n := range live {
		assert.Zero(t, n, "live %s", what)
	}
}
