package compute_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
)

// A write's call never waits for the device: with the stream busy, it fills the chunks
// the device is done with, queues their copies behind the busy work and leaves the rest
// to Wait. It used to take back every chunk the ring held, waiting under the owner's
// lock for each one's last copy, so it returned only after the busy work had run.
func TestWriteCallDoesNotWaitForTheDevice(t *testing.T) {
	const chunk, chunks = 64 << 10, 8
	e := newEnvWith(t, func(p hipsys.Platform) hipsys.Platform { return p },
		compute.Config{StagingChunk: chunk, StagingDepth: 2})
	z := e.empty(1, chunks*chunk/4)
	busy := e.empty(1, 1)
	spinArgs := &compute.Args{Buffers: []compute.Binding{busy}, Scalars: []compute.Scalar{compute.U64(2_000_000)}}
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 1, compute.DryRun))
	want := make([]float32, chunks*chunk/4)
	for i := range want {
		want[i] = float32(i%1000 + 1)
	}
	// How long the busy work runs here, so the test holds on a fast machine and a slow one.
	start := time.Now()
	spinArgs.Scalars[0] = compute.U64(400_000_000)
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 1, compute.Execute))
	require.NoError(t, e.srv.Sync(nil, 1).Wait())
	busyFor := time.Since(start)
	require.Greater(t, busyFor, 50*time.Millisecond, "the busy kernel is too short to tell")

	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), spinArgs, 1, compute.Execute))
	start = time.Now()
	f := e.srv.Write([]compute.WriteOp{{Desc: compute.Linear(z, chunks*chunk), Data: f32bytes(want...)}}, 1)
	called := time.Since(start)
	require.NoError(t, f.Wait())
	assert.Less(t, called, busyFor/2, "the write's call waited for the device (the stream was busy for %v)", busyFor)
	got := e.mustRead(1, z, chunks*chunk/4)
	require.Equal(t, want, got)
}
