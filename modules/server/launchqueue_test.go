package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A launch the driver refuses leaves the buffers as CubeCL would, whether the refusal
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
				scale := scaler(t, d)
				scale(a, w) // compiled and warm: the fault hits a launch
				require.NoError(t, d.Sync())

				f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
				scale(a, x) // refused
				scale(x, y) // reads what nothing wrote
				for range fillers {
					require.NoError(t, d.Launch(devInc, grid(2), server.Args{Buffers: []*server.Buffer{z}, Scalars: []server.Scalar{server.U32(2)}}))
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

				// Relaunching from clean inputs recovers, as in CubeCL.
				scale(a, y)
				assert.Equal(t, []float32{2, 4}, readFloats(t, d.Stream, y))
			})
		}
	}
}

// scaler launches out = 2 × in over two floats on d's stream 0.
func scaler(t *testing.T, d *server.Device) func(in, out *server.Buffer) {
	return func(in, out *server.Buffer) {
		require.NoError(t, d.Launch(devScale, grid(2), server.Args{
			Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(2)}}))
	}
}

// A refusal settled by the next call of any kind: a Sync of the refused launch's output,
// and a profile window that the launch fell in is invalidated.
func TestQueuedRefusalSeenByTheNextCall(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 0, 0)
	k := upload(t, d.Stream, 1, 2)
	require.NoError(t, d.Launch(devInc, grid(2), server.Args{Buffers: []*server.Buffer{k}, Scalars: []server.Scalar{server.U32(2)}}))
	prof, err := d.StartProfile()
	require.NoError(t, err)
	f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	require.NoError(t, d.Launch(devInc, grid(2), server.Args{Buffers: []*server.Buffer{x}, Scalars: []server.Scalar{server.U32(2)}}))
	assert.ErrorIs(t, d.Sync(x), hipsys.ErrorLaunchFailure)
	_, err = prof.Stop()
	assert.Error(t, err, "the window held a failure")
	assert.Equal(t, []float32{2, 3}, readFloats(t, d.Stream, k))
}

// scriptedQueue is a launch queue over the test platform that does what the nvidia one
// may: it holds a refusal back (refuse), and issues a later launch on the caller's
// thread (seq 0) with that refusal returned beside it (directNext).
type scriptedQueue struct {
	p                  hipsys.Platform
	seq                uint64
	refuse, directNext bool
	pending            []hipsys.LaunchRefusal
}

func (q *scriptedQueue) Launch(fn hipsys.Function, grid, block hipsys.Dim3, shmem uint32, s hipsys.Stream,
	args *hipsys.KernelArgs, refused []hipsys.LaunchRefusal) (uint64, []hipsys.LaunchRefusal, error) {
	if q.directNext {
		q.directNext = false
		refused = append(refused, q.pending...)
		q.pending = nil
		return 0, refused, q.p.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
	}
	q.seq++
	if q.refuse {
		q.refuse = false
		q.pending = append(q.pending, hipsys.LaunchRefusal{Seq: q.seq, Err: &hipsys.Error{Platform: "test", Call: "hipModuleLaunchKernel", Status: hipsys.ErrorLaunchOutOfResources}})
		return q.seq, refused, nil
	}
	return q.seq, refused, q.p.ModuleLaunchKernel(fn, grid, block, shmem, s, args)
}

func (q *scriptedQueue) Settle(refused []hipsys.LaunchRefusal) []hipsys.LaunchRefusal {
	refused = append(refused, q.pending...)
	q.pending = nil
	return refused
}

func (q *scriptedQueue) Depth() int   { return 4 }
func (q *scriptedQueue) Close() error { return nil }

type scriptedPlatform struct {
	hipsys.Platform
	q *scriptedQueue
}

func (p *scriptedPlatform) OpenLaunchQueue(int) (hipsys.LaunchQueue, error) { return p.q, nil }

// A launch issued directly that comes back with the refusal of a queued one before it is
// held to that refusal too: it read what the refused launch never wrote.
func TestDirectLaunchAfterAQueuedRefusal(t *testing.T) {
	inner, err := hipsys.Open("auto")
	require.NoError(t, err)
	q := &scriptedQueue{p: inner}
	d, err := server.OpenPlatform(&scriptedPlatform{Platform: inner, q: q}, server.Options{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.Close()) }()
	a := upload(t, d.Stream, 1, 2)
	x := upload(t, d.Stream, 0, 0)
	y := upload(t, d.Stream, 0, 0)
	scale := scaler(t, d)
	scale(a, y) // compiled and warm
	q.refuse = true
	scale(a, x) // queued, refused
	q.directNext = true
	scale(x, y) // issued directly, the refusal returned with it
	_, err = d.Read(x)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchOutOfResources)
	_, err = d.Read(y)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchOutOfResources, "y was computed from x")
	assert.Equal(t, []float32{1, 2}, readFloats(t, d.Stream, a))
}
