package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A launch the driver refuses leaves the buffers as the seed would, whether the refusal
// was seen at once (DirectLaunch) or came back from the launch queue launches later
// (launchqueue.go): the refused launch's outputs fail, so do those of a later launch
// that read them, and a buffer a later launch rewrote from clean inputs is clean. The
// test platform's queue (faults.Platform's: the nvidia queue on an NVIDIA GPU, an
// emulation elsewhere) brings the refusal back at the next settle or, with filler
// launches between, from a later launch.
func TestQueuedRefusalLeavesWhatTheSeedWould(t *testing.T) {
	for _, direct := range []bool{false, true} {
		for _, fillers := range []int{0, 40} {
			name := map[bool]string{false: "queued", true: "direct"}[direct]
			if fillers > 0 {
				name += "/refusal returned by a later launch"
			}
			t.Run(name, func(t *testing.T) {
				d, f := openDevice(t, server.Options{DirectLaunch: direct})
				a := upload(t, d.Stream, 1, 2)
				x := upload(t, d.Stream, 0, 0)
				y := upload(t, d.Stream, 0, 0)
				z := upload(t, d.Stream, 5, 5)
				w := upload(t, d.Stream, 0, 0)
				scale := func(in, out *server.DeviceBuffer) {
					require.NoError(t, d.Launch(devScale, grid(2), server.LaunchArgs{
						Buffers: []*server.DeviceBuffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(2)}}))
				}
				scale(a, w) // compiled and warm: the fault hits a launch
				require.NoError(t, d.Sync())

				f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
				scale(a, x) // refused
				scale(x, y) // reads what nothing wrote
				for range fillers {
					require.NoError(t, d.Launch(devInc, grid(2), server.LaunchArgs{Buffers: []*server.DeviceBuffer{z}, Scalars: []server.Scalar{server.U32(2)}}))
				}
				scale(y, w) // and so on, down the chain
				scale(a, x) // x rewritten from a clean input

				_, err := d.Read(y)
				assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "y was computed from x, which the refused launch never wrote")
				_, err = d.Read(w)
				assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "w was computed from y")
				assert.Equal(t, []float32{2, 4}, readFloats(t, d.Stream, x), "x rewritten after the refusal")
				assert.Equal(t, []float32{5 + float32(fillers), 5 + float32(fillers)}, readFloats(t, d.Stream, z), "z never touched the refused launch's outputs")
				assert.Equal(t, []float32{1, 2}, readFloats(t, d.Stream, a))

				// Relaunching from clean inputs recovers, as in the seed.
				scale(a, y)
				assert.Equal(t, []float32{2, 4}, readFloats(t, d.Stream, y))
			})
		}
	}
}

// A refusal settled by the next call of any kind: a Sync of the refused launch's output,
// and a profile window that the launch fell in is invalidated.
func TestQueuedRefusalSeenByTheNextCall(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 0, 0)
	k := upload(t, d.Stream, 1, 2)
	require.NoError(t, d.Launch(devInc, grid(2), server.LaunchArgs{Buffers: []*server.DeviceBuffer{k}, Scalars: []server.Scalar{server.U32(2)}}))
	prof, err := d.StartProfile()
	require.NoError(t, err)
	f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	require.NoError(t, d.Launch(devInc, grid(2), server.LaunchArgs{Buffers: []*server.DeviceBuffer{x}, Scalars: []server.Scalar{server.U32(2)}}))
	assert.ErrorIs(t, d.Sync(x), hipsys.ErrorLaunchFailure)
	_, err = prof.Stop()
	assert.Error(t, err, "the window held a failure")
	assert.Equal(t, []float32{2, 3}, readFloats(t, d.Stream, k))
}
