package server_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

const stencilSrc = `
extern "C" __global__ void blur(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}
`

const stencilFixed = `
extern "C" __global__ void blur(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}
`

// A Device opened with Check runs its kernels checked: the stencil that reads one element
// before and after its input is reported at the first wait, by parameter, offset, thread
// and line, its output carries the failure, and the fixed twin runs clean.
func TestDeviceCheckReportsInTheKernelsTerms(t *testing.T) {
	d, err := server.Open(server.Options{Platform: "cpu", Check: hipsys.CheckMemory | hipsys.CheckSync, CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer d.Close()
	const n = 100
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	src, err := server.UploadSlice(d.Stream, in)
	require.NoError(t, err)
	out, err := server.AllocSlice[float32](d.Stream, n)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	bad := server.NewKernel(stencilSrc, "blur", hipsys.Dim3{X: 128}, nil)
	require.NoError(t, d.Call(bad, one, src, out, int32(n)))
	err = d.Sync()
	var reps *hipsys.CheckReports
	require.True(t, errors.As(err, &reps), "%v", err)
	require.Equal(t, 2, reps.Total, "in[-1] by thread 0, in[n] by thread n-1: %v", reps.Reports)
	first, last := reps.Reports[0], reps.Reports[1]
	if first.Thread.X != 0 {
		first, last = last, first
	}
	require.Equal(t, "in", first.Param)
	require.Equal(t, int64(-4), first.Offset)
	require.Equal(t, hipsys.Dim3{}, first.Thread)
	require.Equal(t, 4, first.Line)
	require.Equal(t, int64(4*n), last.Offset)
	require.Equal(t, uint32(n-1), last.Thread.X)
	_, err = server.ReadSlice[float32](d.Stream, out)
	require.True(t, errors.As(err, &reps), "the output carries the checked launch's failure: %v", err)

	// The fixed twin runs clean on the same Device: its input's upload was confirmed by
	// the Sync before the bad launch, so the failed wait did not mark it.
	good := server.NewKernel(stencilFixed, "blur", hipsys.Dim3{X: 128}, nil)
	out2, err := server.AllocSlice[float32](d.Stream, n)
	require.NoError(t, err)
	require.NoError(t, d.Call(good, one, src, out2, int32(n)))
	got, err := server.ReadSlice[float32](d.Stream, out2)
	require.NoError(t, err)
	require.InDelta(t, 50, got[50], 1e-4)
}

// Checks are a Device's own: another Device of the process (which shares the platform)
// compiles and runs the same kernel unchecked, beside the checked one and after it closed.
func TestCheckIsTheDevicesOwn(t *testing.T) {
	checkedDev, err := server.Open(server.Options{Platform: "cpu", Check: hipsys.CheckMemory})
	require.NoError(t, err)
	plain, err := server.Open(server.Options{Platform: "cpu"})
	require.NoError(t, err)
	defer plain.Close()
	bad := server.NewKernel(stencilSrc, "blur", hipsys.Dim3{X: 128}, nil)
	run := func(d *server.Device) error {
		src, err := server.UploadSlice(d.Stream, make([]float32, 100))
		require.NoError(t, err)
		out, err := server.AllocSlice[float32](d.Stream, 100)
		require.NoError(t, err)
		require.NoError(t, d.Sync())
		require.NoError(t, d.Call(bad, hipsys.Dim3{X: 1, Y: 1, Z: 1}, src, out, int32(100)))
		return d.Sync()
	}
	var reps *hipsys.CheckReports
	require.True(t, errors.As(run(checkedDev), &reps))
	require.NoError(t, run(plain), "the unchecked Device runs the kernel as it is")
	require.NoError(t, checkedDev.Close())
	require.NoError(t, run(plain))
}
