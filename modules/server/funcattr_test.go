package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A kernel's attributes through the Device, and the dynamic shared-memory limit it sets:
// a launch over the kernel's limit is refused naming it and the device's; raised, the
// launch gets what it asks for; over what the device can give, the setter refuses.
func TestFuncAttributes(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	const shared = 64 << 10
	limit := max(d.Props().SharedMemPerBlockOptin, d.Props().SharedMemPerBlock)
	if limit < shared {
		t.Skipf("%s gives a block at most %d bytes of shared memory", d.Props().Name, limit)
	}
	const words = shared / 4
	block := server.Block(hipsys.Dim3{X: 64, Y: 1, Z: 1})
	k := server.DefineKernel(windowSource, "shared_window", block, server.IO(server.Read, server.Write), server.SharedMem(shared))

	threads, err := d.FuncAttribute(k, hipsys.FuncAttributeMaxThreadsPerBlock)
	require.NoError(t, err)
	assert.Positive(t, threads)
	_, err = d.FuncAttribute(k, hipsys.FuncAttributeNumRegs)
	require.NoError(t, err)
	_, err = d.FuncAttribute(k, 99)
	require.ErrorIs(t, err, server.ErrInvalidArgument)

	in := make([]float32, words)
	for i := range in {
		in[i] = float32(i)
	}
	x, out := upload(t, d.Stream, in...), alloc(t, d.Stream, 4*words)
	one := hipsys.Dim3{X: 1, Y: 1, Z: 1}

	require.NoError(t, d.SetMaxDynamicSharedMemory(k, 1024))
	got, err := d.FuncAttribute(k, hipsys.FuncAttributeMaxDynamicSharedSizeBytes)
	require.NoError(t, err)
	assert.Equal(t, 1024, got)
	err = d.Stream.Call(k, one, x.Arg(), out.Arg(), server.U32(words))
	require.ErrorIs(t, err, server.ErrInvalidArgument)
	require.ErrorContains(t, err, "over the kernel's limit of 1024")
	require.ErrorContains(t, err, "SharedMemPerBlockOptin")

	require.NoError(t, d.SetFuncAttribute(k, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, shared))
	require.NoError(t, d.Stream.Call(k, one, x.Arg(), out.Arg(), server.U32(words)))
	res := readFloats(t, d.Stream, out)
	for i := range words {
		require.Equal(t, in[words-1-i], res[i], "element %d", i)
	}

	err = d.SetFuncAttribute(k, hipsys.FuncAttributeMaxDynamicSharedSizeBytes, int(limit)+1)
	require.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	require.NoError(t, d.SetFuncAttribute(k, hipsys.FuncAttributePreferredSharedMemoryCarveout, 50))
	require.ErrorIs(t, d.SetFuncAttribute(k, hipsys.FuncAttributeNumRegs, 1), hipsys.ErrorInvalidValue)
}

// A launch of a kernel whose dynamic shared-memory limit was set is checked against it
// and still allocates nothing beyond what the same launch straight through hipsys does.
func TestCallWithKernelLimitAllocatesNothing(t *testing.T) {
	d := openChecked(t)
	require.NoError(t, d.SetMaxDynamicSharedMemory(argSaxpy, 1024))
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 1, 2, 3, 4)
	g := hipsys.Dim3{X: 1, Y: 1, Z: 1}
	device := steadyAllocs(t, func() {
		_ = d.Call(argSaxpy, g, server.I32(4), server.F32(1), x.Arg(), y.Arg())
	}, func() { require.NoError(t, d.Sync()) })
	p, sys, fn := rawKernel(t, argSaxpy)
	ptr, err := p.Malloc(16)
	require.NoError(t, err)
	defer p.Free(ptr)
	var a hipsys.KernelArgs
	raw := steadyAllocs(t, func() {
		_ = p.ModuleLaunchKernel(fn, g, devBlock, 0, sys, a.Reset().I32(4).F32(1).Ptr(ptr).Ptr(ptr))
	}, func() { require.NoError(t, p.StreamSynchronize(sys)) })
	t.Logf("allocations per launch: device %.2f, hipsys %.2f", device, raw)
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	assert.LessOrEqual(t, device, raw)
}
