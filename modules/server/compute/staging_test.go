package compute_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// A staging chunk whose wait failed while its copy was still in flight is not reused
// until that copy is done: the next copy through it waits again. Reused at once, the
// read's late device-to-host copy would land in the chunk after the next write had
// filled it, and the write would put the read's bytes on the device.
func TestStagingChunkOfAFailedWaitIsNotReusedUnderItsCopy(t *testing.T) {
	const chunk = 64 << 10
	e := newEnvWith(t, func(p hipsys.Platform) hipsys.Platform { return p },
		compute.Config{StagingChunk: chunk, StagingDepth: 2})
	x := e.floats(1, make([]float32, chunk/4)...)
	z := e.empty(1, 2*chunk/4)
	busy := e.empty(1, 1)
	// The stream is busy for a while, so the read below is queued behind it and its
	// copy is still in flight when its wait fails.
	spinArgs := &compute.Args{Buffers: []compute.Binding{busy}, Scalars: []compute.Scalar{compute.U64(2_000_000)}}
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 1, compute.DryRun))
	spinArgs.Scalars[0] = compute.U64(200_000_000)
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 1, compute.Execute))
	e.f.FailNth("hipEventSynchronize", 1, hipsys.ErrorLaunchFailure)
	_, err := e.read(1, x, chunk/4)
	require.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	e.f.Reset()

	// Two chunks' worth: the second piece takes the chunk the failed read used.
	want := make([]float32, 2*chunk/4)
	for i := range want {
		want[i] = float32(i + 1)
	}
	require.NoError(t, e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(z, 2*chunk), Data: f32bytes(want...)}}, 1).Wait())
	got := e.mustRead(1, z, 2*chunk/4)
	require.Len(t, got, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("z[%d] = %v, want %v: the write put another copy's bytes on the device", i, got[i], want[i])
		}
	}
}
