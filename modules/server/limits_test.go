package server_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

const sharedSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void shared_rev(const float* in, float* out, unsigned n) {
    extern __shared__ float tile[];
    unsigned i = threadIdx.x;
    if (i < n) tile[i] = in[i];
    __syncthreads();
    if (i < n) out[i] = tile[n - 1 - i];
}
`

// A launch configuration the device cannot run is refused at the call, naming the
// limit it breaks, and queues and changes nothing.
func TestLaunchConfigurationCheckedAgainstTheDevice(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	props := d.Props()
	x := upload(t, d.Stream, 1, 2, 3, 4)
	out := upload(t, d.Stream, 9, 9, 9, 9)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	over := func(limit int) uint32 { return uint32(min(int64(limit)+1, math.MaxUint32)) }
	for _, c := range []struct {
		name, want string
		k          *server.Kernel
		grid       hipsys.Dim3
	}{
		{"threads per block", "over the device's limit of", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: uint32(props.MaxThreadsDim[0]), Y: 2, Z: 1}), server.IO(server.Read, server.Write)), one},
		{"block x", "block x dimension", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: over(props.MaxThreadsDim[0]), Y: 1, Z: 1}), server.IO(server.Read, server.Write)), one},
		{"block z", "block z dimension", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: 1, Y: 1, Z: over(props.MaxThreadsDim[2])}), server.IO(server.Read, server.Write)), one},
		{"zero block", "has a zero x dimension", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: 0, Y: 4, Z: 1}), server.IO(server.Read, server.Write)), one},
		{"zero grid", "grid 0×1×1 has no blocks in x (to launch nothing for an empty input, skip the call)", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: 4}), server.IO(server.Read, server.Write)), hipsys.Dim3{}},
		{"shared memory", "(SharedMemPerBlockOptin)", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: 4, Y: 1, Z: 1}), server.IO(server.Read, server.Write), server.SharedMem(uint32(max(props.SharedMemPerBlockOptin, props.SharedMemPerBlock))+1)), one},
		{"grid y", "grid y dimension", server.DefineKernel(sharedSource, "shared_rev",
			server.Block(hipsys.Dim3{X: 4, Y: 1, Z: 1}), server.IO(server.Read, server.Write), server.SharedMem(16)),
			hipsys.Dim3{X: 1, Y: over(props.MaxGridSize[1]), Z: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := d.Call(c.k, c.grid, x.Arg(), out.Arg(), server.U32(4))
			require.Error(t, err)
			assert.ErrorIs(t, err, server.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.want)
			require.NoError(t, d.Sync(x, out))
			assert.Equal(t, []float32{9, 9, 9, 9}, readFloats(t, d.Stream, out))
		})
	}
}

// A kernel's dynamic shared memory, set at construction, is what its launches get.
func TestKernelSharedMemReachesTheLaunch(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	k := server.DefineKernel(sharedSource, "shared_rev", server.Block(hipsys.Dim3{X: 4, Y: 1, Z: 1}),
		server.IO(server.Read, server.Write), server.SharedMem(16))
	x := upload(t, d.Stream, 1, 2, 3, 4)
	out := alloc(t, d.Stream, 16)
	require.NoError(t, d.Call(k, hipsys.Dim3{X: 1, Y: 1, Z: 1}, x.Arg(), out.Arg(), server.U32(4)))
	assert.Equal(t, []float32{4, 3, 2, 1}, readFloats(t, d.Stream, out))
}

// A Kernel cannot be changed through what its accessors return.
func TestKernelIsImmutable(t *testing.T) {
	io := []server.Access{server.Read, server.Write}
	opts := []string{"-O2"}
	k := server.NewKernel(sharedSource, "shared_rev", hipsys.Dim3{X: 4, Y: 1, Z: 1}, io, opts...)
	io[0], opts[0] = server.Write, "-O0"
	got := k.IO()
	got[1] = server.Read
	k.CompilerOptions()[0] = "-g"
	assert.Equal(t, []server.Access{server.Read, server.Write}, k.IO())
	assert.Equal(t, []string{"-O2"}, k.CompilerOptions())
	assert.Equal(t, "shared_rev", k.Entry())
	assert.Equal(t, hipsys.Dim3{X: 4, Y: 1, Z: 1}, k.Block())
	assert.Equal(t, uint32(0), k.SharedMem())
	assert.Equal(t, server.NewKernel(sharedSource, "shared_rev", hipsys.Dim3{X: 8, Y: 1, Z: 1}, nil, "-O2").ID(), k.ID(),
		"the block is a launch fact, not the code's identity")

	d, _ := openDevice(t, server.Options{})
	require.ErrorIs(t, d.Call(&server.Kernel{}, hipsys.Dim3{X: 1, Y: 1, Z: 1}), server.ErrInvalidArgument)
	require.ErrorIs(t, d.Compile(&server.Kernel{}), server.ErrInvalidArgument)
}
