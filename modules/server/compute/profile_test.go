package compute_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server/compute"
	"github.com/cubehip/cubehip/modules/stream"
)

var spin = compute.NewKernel(`extern "C" __global__ void spin(unsigned* out, unsigned long long iters) {
    volatile unsigned long long x = 0;
    for (unsigned long long i = 0; i < iters; i++) x += i;
    out[0] = (unsigned)x;
}`, "spin", hipsys.Dim3{X: 1, Y: 1, Z: 1}, []compute.Access{compute.Write})

func TestProfileMeasuresDeviceTime(t *testing.T) {
	e := newEnv(t)
	out := e.empty(0, 1)
	args := &compute.Args{Buffers: []compute.Binding{out}, Scalars: []compute.Scalar{compute.U64(2_000_000)}}
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), args, 0, compute.DryRun))
	tok, err := e.srv.StartProfile(0)
	require.NoError(t, err)
	require.NoError(t, e.srv.Launch(spin, compute.Static(1, 1, 1), args, 0, compute.Execute))
	f, err := e.srv.EndProfile(0, tok)
	require.NoError(t, err)
	d, err := f.Wait()
	require.NoError(t, err)
	assert.Positive(t, d)
	// The events went back to the pool: the next window creates none.
	created := e.f.Calls("hipEventCreateWithFlags")
	tok, err = e.srv.StartProfile(0)
	require.NoError(t, err)
	f, err = e.srv.EndProfile(0, tok)
	require.NoError(t, err)
	_, err = f.Wait()
	require.NoError(t, err)
	assert.Equal(t, created, e.f.Calls("hipEventCreateWithFlags"))
}

func TestProfileInvalidation(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	launch(t, e.srv, addOne, 2, 0, in, out)
	tok, err := e.srv.StartProfile(0)
	require.NoError(t, err)
	e.f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	launch(t, e.srv, addOne, 2, 1, in, out) // a failure on any stream invalidates the window
	_, err = e.srv.EndProfile(0, tok)
	assert.ErrorIs(t, err, compute.ErrProfileInvalidated)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	// A window opened after the failure is good.
	tok, err = e.srv.StartProfile(0)
	require.NoError(t, err)
	launch(t, e.srv, addOne, 2, 0, in, out)
	f, err := e.srv.EndProfile(0, tok)
	require.NoError(t, err)
	_, err = f.Wait()
	assert.NoError(t, err)
}

// A window that sees several failures reports the first: it is what made the measured
// work wrong, and what the later ones follow from.
func TestProfileKeepsTheFirstFailure(t *testing.T) {
	e := newEnv(t)
	in, out, out2 := e.floats(0, 1, 2), e.empty(0, 2), e.empty(0, 2)
	launch(t, e.srv, addOne, 2, 0, in, out)
	tok, err := e.srv.StartProfile(0)
	require.NoError(t, err)
	e.f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure)
	launch(t, e.srv, addOne, 2, 1, in, out)
	e.f.FailNext("hipModuleLaunchKernel", 1, hipsys.ErrorInvalidValue)
	launch(t, e.srv, addOne, 2, 2, in, out2)
	require.ErrorIs(t, e.srv.Check([]compute.Binding{out2}, 0), hipsys.ErrorInvalidValue, "both failures happened")
	_, err = e.srv.EndProfile(0, tok)
	assert.ErrorIs(t, err, compute.ErrProfileInvalidated)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "the first failure")
	assert.NotErrorIs(t, err, hipsys.ErrorInvalidValue, "not the last")
}

func TestProfileRefusedWhileCapturing(t *testing.T) {
	e := newEnv(t)
	open, err := e.srv.StartProfile(0) // opened before the capture begins
	require.NoError(t, err)
	require.NoError(t, e.srv.GraphPrepare(0))
	prepared, err := e.srv.StartProfile(0)
	require.NoError(t, err, "the prepare run is not recorded: it may be profiled")
	e.srv.AbandonProfile(0, prepared)
	require.NoError(t, e.srv.BeginCapture(0))
	_, err = e.srv.StartProfile(0)
	assert.ErrorIs(t, err, stream.ErrGraphState)
	assert.ErrorContains(t, err, "start_profile: a capture window records launches only")
	_, err = e.srv.EndProfile(0, open)
	assert.ErrorContains(t, err, "end_profile: a capture window records launches only")
	g, err := e.srv.EndCapture(0)
	require.NoError(t, err)
	_, err = e.srv.EndProfile(0, open)
	assert.ErrorIs(t, err, compute.ErrProfileNotRegistered, "the refused window was abandoned")
	e.srv.GraphDestroy(g, 0)
}

func TestProfileAbandonAndUnknown(t *testing.T) {
	e := newEnv(t)
	tok, err := e.srv.StartProfile(0)
	require.NoError(t, err)
	e.srv.AbandonProfile(0, tok)
	e.srv.AbandonProfile(0, tok) // twice is harmless
	_, err = e.srv.EndProfile(0, tok)
	assert.ErrorIs(t, err, compute.ErrProfileNotRegistered)
	_, err = e.srv.EndProfile(0, 12345)
	assert.ErrorIs(t, err, compute.ErrProfileNotRegistered)
	e.f.FailNext("hipEventRecord", 1, hipsys.ErrorInvalidHandle)
	_, err = e.srv.StartProfile(0)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidHandle)
}

func TestProfileFuturesConcurrentSafe(t *testing.T) {
	e := newEnv(t)
	in, out := e.floats(0, 1, 2), e.empty(0, 2)
	var wg sync.WaitGroup
	for range 32 {
		tok, err := e.srv.StartProfile(0)
		require.NoError(t, err)
		launch(t, e.srv, addOne, 2, 0, in, out)
		f, err := e.srv.EndProfile(0, tok)
		require.NoError(t, err)
		wg.Go(func() {
			_, err := f.Wait()
			assert.NoError(t, err)
		})
	}
	wg.Wait()
}
