package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

// A failure surfaces at the first call that can report it, and at the stream's next
// Sync: the tests of which call reports what.

const firstCallSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}`

// The first Call of a kernel that does not compile returns the compiler's error (its
// output carries it too), and the stream's next Sync reports it once more.
func TestCallReturnsTheCompileError(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	broken := server.DefineKernel(`extern "C" __global__ void broken(float* y) { y[0] = oops; }`, "broken")
	y := upload(t, d.Stream, 1)
	err := d.Call(broken, server.Dim3{X: 1}, y)
	require.ErrorIs(t, err, server.ErrCompilation)
	assert.ErrorContains(t, err, "oops")
	assert.ErrorIs(t, d.Check(y), server.ErrCompilation, "the output carries it")
	assert.ErrorIs(t, d.Sync(), server.ErrCompilation, "the stream's Sync reports it")
	assert.NoError(t, d.Sync(), "once")
	assert.ErrorIs(t, d.Call(broken, server.Dim3{X: 1}, y), server.ErrCompilation, "every launch of it")

	// A kernel with no output: nothing could carry it, the call and the Sync report it.
	printer := server.DefineKernel(`extern "C" __global__ void printer() { not C++ }`, "printer")
	require.ErrorIs(t, d.Call(printer, server.Dim3{X: 1}), server.ErrCompilation)
	assert.ErrorIs(t, d.Sync(), server.ErrCompilation)
}

// A misspelled entry point is named with the ones the source defines, at the first call,
// not blamed on the arguments (whose types no declaration gave).
func TestMisspelledEntryNamesTheDefinedOnes(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	x, y := upload(t, d.Stream, 1), upload(t, d.Stream, 10)
	wrong := server.DefineKernel(firstCallSource, "Saxpy")
	err := d.Call(wrong, server.Dim3{X: 1}, 1, 2, x, y)
	require.ErrorIs(t, err, server.ErrCompilation)
	assert.ErrorContains(t, err, `the source has no kernel named "Saxpy" (it defines: saxpy)`)
	assert.NotContains(t, err.Error(), "argument")
	assert.Equal(t, []float32{10}, readFloats(t, d.Stream, y), "nothing ran, nothing changed")
	require.NoError(t, d.Check(y), "no argument was sorted: no buffer fails")

	err = d.Launch(wrong, grid(1), server.Args{Buffers: []*server.Buffer{x, y}})
	assert.ErrorContains(t, err, `(it defines: saxpy)`, "through Launch too")
	assert.ErrorContains(t, d.Compile(wrong), `(it defines: saxpy)`, "and Compile")
}

// After a device fault, the stream's Sync reports it even where a read reported it
// first; and a device that keeps refusing work (a GPU after a fault: the driver's wait
// fails from then on) has it reported by every Sync, never a nil.
func TestSyncReportsAFaultEveryTimeTheDeviceDoes(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	in, out := upload(t, d.Stream, 1, 2, 3, 4), alloc(t, d.Stream, 16)
	require.NoError(t, d.Sync())
	f.Fail("hipStreamSynchronize", hipsys.ErrorIllegalAddress)
	require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	for i := range 3 {
		assert.ErrorIs(t, d.Sync(), hipsys.ErrorIllegalAddress, "sync %d", i)
	}
	f.Reset()
	assert.NoError(t, d.Sync(), "the device works again: nothing new failed")
}

// A launch the driver refuses returns nil (its failure is the work's, carried by its
// outputs), and the stream's next Sync reports it.
func TestSyncReportsARefusedLaunch(t *testing.T) {
	d, f := openDevice(t, server.Options{DirectLaunch: true})
	in, out := upload(t, d.Stream, 1, 2, 3, 4), alloc(t, d.Stream, 16)
	require.NoError(t, d.Compile(devScale))
	require.NoError(t, d.Sync())
	require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	f.Reset()
	assert.ErrorIs(t, d.Sync(), hipsys.ErrorLaunchFailure)
	assert.NoError(t, d.Sync())
	assert.ErrorIs(t, d.Check(out), hipsys.ErrorLaunchFailure, "the output carries it still")

	// Stream ids sharing a device stream share its record: the Sync of either reports it.
	d2, f2 := openDevice(t, server.Options{DirectLaunch: true, MaxStreams: 1})
	in2, out2 := upload(t, d2.Stream, 1, 2, 3, 4), alloc(t, d2.Stream, 16)
	require.NoError(t, d2.Compile(devScale))
	require.True(t, f2.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, d2.On(1).Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{in2, out2}, Scalars: []server.Scalar{server.F32(2), server.U32(4)}}))
	f2.Reset()
	assert.ErrorIs(t, d2.On(0).Sync(), hipsys.ErrorLaunchFailure)
	assert.NoError(t, d2.On(1).Sync())
}

// A typed buffer goes only to a pointer of its element type, vector, 16-bit float and
// pointer-to-pointer parameters included; b.Arg() passes the bytes as they are.
func TestTypedBuffersMatchThePointee(t *testing.T) {
	d, _ := openDevice(t, server.Options{CacheDir: "-"})
	k := server.DefineKernel(`#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
extern "C" __global__ void k(const float2* v, __half* h, float** p) {}`, "k", server.Block(server.Dim3{X: 1}))
	f32, f64, u16, u64 := alloc32(t, d), allocT[float64](t, d), allocT[uint16](t, d), allocT[uint64](t, d)
	require.NoError(t, d.Call(k, server.Dim3{X: 1}, f32, u16, u64))
	err := d.Call(k, server.Dim3{X: 1}, f64, u16, u64)
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorContains(t, err, "argument 0 (v): a buffer of float64 given, the kernel takes a buffer (const float2* v)")
	assert.ErrorContains(t, d.Call(k, server.Dim3{X: 1}, f32, f32, u64), "argument 1 (h): a buffer of float32 given")
	assert.ErrorContains(t, d.Call(k, server.Dim3{X: 1}, f32, u16, f32), "argument 2 (p): a buffer of float32 given")
	require.NoError(t, d.Call(k, server.Dim3{X: 1}, f64.Arg(), u16, u64), "Arg passes the bytes as they are")
}

func alloc32(t *testing.T, d *server.Device) *server.Buffer { return allocT[float32](t, d) }

func allocT[T server.Number](t *testing.T, d *server.Device) *server.Buffer {
	t.Helper()
	b, err := server.AllocSlice[T](d.Stream, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Release() })
	return b
}
