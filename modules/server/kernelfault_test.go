package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// scaleOrFault scales in into out, after a store to the address bad when it is not 0.
var scaleOrFault = server.NewKernel(`#include <hip/hip_runtime.h>
extern "C" __global__ void scale_or_fault(const float* in, float* out, unsigned long long bad, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (bad != 0) *(volatile int*)bad = 1;
    if (i < n) out[i] = 2 * in[i];
}`, "scale_or_fault", devBlock, []server.Access{server.Read, server.Write})

// A kernel that really faults on the cpu device (a store to an unmapped address): the
// launch's output carries the fault, with the status a GPU gives and the kernel's name;
// the process lives, the same Device runs the next launch right, and so does a Device
// opened after it. On the cpu device only: a GPU's fault is sticky for the process.
func TestKernelFaultLandsOnItsOutputs(t *testing.T) {
	run := func(d *server.Device, in, out *server.Buffer, bad uint64) error {
		return d.Launch(scaleOrFault, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.U64(bad), server.U32(4)}})
	}
	d, err := server.Open(server.Options{Platform: "cpu"})
	require.NoError(t, err)
	in, out, kept := upload(t, d.Stream, 1, 2, 3, 4), upload(t, d.Stream, -1, -1, -1, -1), upload(t, d.Stream, 5, 6, 7, 8)
	require.NoError(t, d.Sync())

	require.NoError(t, run(d, in, out, 16), "the launch is queued; the fault comes later")
	_, err = d.Read(out)
	require.ErrorIs(t, err, hipsys.ErrorIllegalAddress, "the faulted launch's output carries its fault")
	assert.ErrorContains(t, err, "scale_or_fault")
	assert.ErrorIs(t, d.Check(out), hipsys.ErrorIllegalAddress)
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, in), "its input is untouched")
	assert.Equal(t, []float32{5, 6, 7, 8}, readFloats(t, d.Stream, kept), "so is a buffer it does not write")
	require.ErrorIs(t, d.Sync(), hipsys.ErrorIllegalAddress, "the stream's Sync reports its failed work, though a read reported it first")
	require.NoError(t, d.Sync(), "once: the cpu device runs on after a fault")

	require.NoError(t, run(d, in, out, 0))
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, out), "the same Device runs on")
	for _, b := range []*server.Buffer{in, out, kept} {
		require.NoError(t, b.Release())
	}
	require.NoError(t, d.Close())

	later, err := server.Open(server.Options{Platform: "cpu"})
	require.NoError(t, err)
	defer func() { assert.NoError(t, later.Close()) }()
	in, out = upload(t, later.Stream, 3, 3, 3, 3), alloc(t, later.Stream, 16)
	require.NoError(t, run(later, in, out, 0))
	assert.Equal(t, []float32{6, 6, 6, 6}, readFloats(t, later.Stream, out), "a Device opened later works")
}
