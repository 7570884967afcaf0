package server_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// masked keeps in[i] where bit (i % 64) of the host-written mask is set, zero elsewhere,
// and counts what it kept in a __device__ counter.
const globalsSource = `#include <hip/hip_runtime.h>
__constant__ unsigned int keep_mask[2];
__device__ unsigned int kept;
extern "C" __global__ void masked(const float* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned bit = (unsigned)i % 64u;
    const bool keep = (keep_mask[bit / 32u] >> (bit % 32u)) & 1u;
    out[i] = keep ? in[i] : 0.0f;
    if (keep) atomicAdd(&kept, 1u);
}
`

var globalsKernel = server.NewKernel(globalsSource, "masked", hipsys.Dim3{X: 64, Y: 1, Z: 1},
	[]server.Access{server.Read, server.Write}, "-O3")

// checkMasked runs masked under mask on s and checks out and the counter against Go.
func checkMasked(t *testing.T, s server.Stream, in []float32, mask [2]uint32) {
	t.Helper()
	n := len(in)
	src, out := upload(t, s, in...), alloc(t, s, uint64(4*n))
	require.NoError(t, server.WriteGlobalSlice(s, globalsKernel, "keep_mask", mask[:]))
	require.NoError(t, server.WriteGlobalSlice(s, globalsKernel, "kept", []uint32{0}))
	require.NoError(t, s.Call(globalsKernel, grid(n), src.Arg(), out.Arg(), server.I32(int32(n))))
	got := readFloats(t, s, out)
	kept := uint32(0)
	for i := range n {
		want := float32(0)
		if mask[i%64/32]>>(i%32)&1 != 0 {
			want = in[i]
			kept++
		}
		require.Equal(t, want, got[i], "out[%d] under mask %#x", i, mask)
	}
	count, err := server.ReadGlobalSlice[uint32](s, globalsKernel, "kept")
	require.NoError(t, err)
	assert.Equal(t, []uint32{kept}, count, "the kernel's count, read back from its module")
}

// Module variables written from the host are what the next launch on the stream sees,
// write after write, and a __device__ variable the kernel wrote reads back, on every
// stream of the device.
func TestModuleGlobalsOrderedOnTheStream(t *testing.T) {
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	in := make([]float32, 1000)
	for i := range in {
		in[i] = float32(i) + 0.5
	}
	checkMasked(t, d.Stream, in, [2]uint32{0xffffffff, 0})
	checkMasked(t, d.Stream, in, [2]uint32{0x0f0f0f0f, 0x80000001})
	checkMasked(t, d.On(3), in, [2]uint32{0, 0xffff0000})

	size, err := d.GlobalSize(globalsKernel, "keep_mask")
	require.NoError(t, err)
	assert.Equal(t, uint64(8), size)
	raw, err := d.Stream.ReadGlobal(globalsKernel, "keep_mask")
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0xff, 0xff}, raw, "the last mask written, on stream 3")
}

// Wrong names and sizes are refused before anything is queued, naming the variable.
func TestModuleGlobalErrorsNameTheVariable(t *testing.T) {
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	s := d.Stream

	err = s.WriteGlobal(globalsKernel, "keep_masks", make([]byte, 8))
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	assert.ErrorContains(t, err, `"keep_masks"`)
	_, err = s.ReadGlobal(globalsKernel, "nope")
	assert.ErrorIs(t, err, hipsys.ErrorNotFound)
	assert.ErrorContains(t, err, `"nope"`)

	err = server.WriteGlobalSlice(s, globalsKernel, "keep_mask", []uint32{1, 2, 3})
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorContains(t, err, `"keep_mask"`)
	assert.ErrorContains(t, err, "12 bytes, the variable has 8")
	assert.ErrorIs(t, s.ReadGlobalInto(make([]byte, 4), globalsKernel, "keep_mask"), server.ErrInvalidArgument)
	_, err = server.ReadGlobalSlice[float64](s, globalsKernel, "kept")
	assert.ErrorIs(t, err, server.ErrInvalidArgument, "4 bytes are no whole float64")

	assert.ErrorIs(t, s.WriteGlobal(nil, "keep_mask", nil), server.ErrInvalidArgument)
	assert.ErrorIs(t, s.WriteGlobal(globalsKernel, "", nil), server.ErrInvalidArgument)
	broken := server.NewKernel("this is not C++", "masked", hipsys.Dim3{X: 1, Y: 1, Z: 1}, nil)
	assert.ErrorIs(t, s.WriteGlobal(broken, "keep_mask", make([]byte, 8)), server.ErrCompilation)

	require.NoError(t, d.Close())
	assert.ErrorIs(t, s.WriteGlobal(globalsKernel, "keep_mask", make([]byte, 8)), server.ErrClosed)
}

// Inside a capture, a module variable write is recorded with the launch after it: each
// replay writes the recorded mask again, over whatever the host wrote in between.
func TestModuleGlobalWriteIsRecorded(t *testing.T) {
	d, err := server.Open(server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	s := d.Stream
	const n = 128
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i + 1)
	}
	src, out := upload(t, s, in...), alloc(t, s, 4*n)
	g, err := s.Capture(func(s server.Stream) error {
		if err := server.WriteGlobalSlice(s, globalsKernel, "keep_mask", []uint32{0xaaaaaaaa, 0}); err != nil {
			return err
		}
		return s.Call(globalsKernel, grid(n), src.Arg(), out.Arg(), server.I32(n))
	})
	require.NoError(t, err)
	defer g.Destroy()
	require.NoError(t, server.WriteGlobalSlice(s, globalsKernel, "keep_mask", []uint32{0, 0}))
	require.NoError(t, g.Replay())
	got := readFloats(t, s, out)
	for i := range n {
		want := float32(0)
		if i%64 < 32 && i%2 == 1 {
			want = in[i]
		}
		require.Equal(t, want, got[i], "out[%d]", i)
	}
}
