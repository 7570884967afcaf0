package server_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

const callSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void call_saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
// The launch's shape as the kernel sees it: block and grid, each x, y, z.
extern "C" __global__ void call_shape(unsigned* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = blockDim.x; out[1] = blockDim.y; out[2] = blockDim.z;
        out[3] = gridDim.x; out[4] = gridDim.y; out[5] = gridDim.z;
    }
}
extern "C" __global__ void call_types(unsigned char a, short b, unsigned c, long long d,
        size_t e, double f, bool g, double* out) {
    out[0] = a; out[1] = b; out[2] = c; out[3] = (double)d; out[4] = (double)e; out[5] = f; out[6] = g;
}
typedef int count_t;
extern "C" __global__ void call_typedef(count_t n, float* y) { if (threadIdx.x == 0) y[0] = n; }
#define DECLARE(name) extern "C" __global__ void name(int n, float* y)
#define ARGS int n, float* y
extern "C" __global__ void call_args(ARGS) { if (threadIdx.x == 0) y[0] = n; }
`

// saxpy is what a newcomer writes: no Block, no IO, plain Go values.
var callSaxpy = server.DefineKernel(callSource, "call_saxpy")

// The natural Go literal Dim3{X: n} is n×1×1, as a grid and as a block; before, a grid
// with Y and Z unset launched nothing and the read returned the old bytes.
func TestCallZeroYAndZAreOne(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	require.NoError(t, d.Call(callSaxpy, server.Dim3{X: 1}, 4, float32(2), x, y))
	assert.Equal(t, []float32{12, 24, 36, 48}, readFloats(t, d.Stream, y), "the grid Dim3{X: 1} ran")

	shape := server.DefineKernel(callSource, "call_shape", server.Block(server.Dim3{X: 8}))
	assert.Equal(t, server.Dim3{X: 8, Y: 1, Z: 1}, shape.Block())
	out, err := server.AllocSlice[uint32](d.Stream, 6)
	require.NoError(t, err)
	require.NoError(t, d.Call(shape, server.Dim3{X: 3, Z: 2}, out))
	got, err := server.ReadSlice[uint32](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []uint32{8, 1, 1, 3, 1, 2}, got)
}

// A grid with no blocks in x is an error, on Call and Launch alike, and changes nothing;
// a kernel with no Block runs in blocks of 256 threads (before: 1).
func TestCallZeroGridRefusedDefaultBlock256(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	y := upload(t, d.Stream, 10, 20, 30, 40)
	x := upload(t, d.Stream, 1, 2, 3, 4)
	for _, g := range []server.Dim3{{}, {Y: 4}, {X: 0, Y: 1, Z: 1}} {
		err := d.Call(callSaxpy, g, 4, float32(2), x, y)
		require.ErrorIs(t, err, server.ErrInvalidArgument, "grid %v", g)
		assert.ErrorContains(t, err, "has no blocks in x (to launch nothing for an empty input, skip the call)")
	}
	assert.Equal(t, []float32{10, 20, 30, 40}, readFloats(t, d.Stream, y))

	assert.Equal(t, server.Dim3{X: 256, Y: 1, Z: 1}, callSaxpy.Block())
	assert.Equal(t, server.Dim3{X: 256, Y: 1, Z: 1}, server.NewKernel(callSource, "call_shape", server.Dim3{}, nil).Block(),
		"the zero Dim3 as a block is the default block")
	shape := server.DefineKernel(callSource, "call_shape")
	out, err := server.AllocSlice[uint32](d.Stream, 6)
	require.NoError(t, err)
	require.NoError(t, d.Call(shape, server.Dim3{X: 1}, out))
	got, err := server.ReadSlice[uint32](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []uint32{256, 1, 1, 1, 1, 1}, got)
}

// Without IO, each buffer's access comes from its declaration, as in Python: const T*
// is Read, another pointer ReadWrite. IO overrides it.
func TestKernelIOInferredFromTheSignature(t *testing.T) {
	assert.Equal(t, []server.Access{server.Read, server.ReadWrite}, callSaxpy.IO())
	assert.Equal(t, []server.Access{server.ReadWrite}, server.DefineKernel(callSource, "call_shape").IO())
	assert.Equal(t, []server.Access{server.Read, server.Write},
		server.DefineKernel(callSource, "call_saxpy", server.IO(server.Read, server.Write)).IO())
	assert.Empty(t, server.DefineKernel(callSource, "call_macro").IO(), "a macro's declaration is not read")
	assert.Equal(t, []server.Access{server.ReadWrite}, server.DefineKernel(callSource, "call_typedef").IO())
	assert.Empty(t, server.DefineKernel(callSource, "call_types", server.IO()).IO(), "IO() says: no buffers")

	// The inferred access is the one failures follow: y, inferred ReadWrite, is read, so
	// a failure it carries stops the launch; declared Write, it is only overwritten.
	d, f := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	writes := server.DefineKernel(callSource, "call_saxpy", server.IO(server.Read, server.Write))
	require.True(t, f.FailNth("hipModuleLaunchKernel", 1, hipsys.ErrorLaunchFailure))
	require.NoError(t, d.Call(writes, server.Dim3{X: 1}, 4, float32(2), x, y))
	require.ErrorIs(t, d.Check(y), hipsys.ErrorLaunchFailure)
	require.NoError(t, d.Call(callSaxpy, server.Dim3{X: 1}, 4, float32(2), x, y))
	assert.ErrorIs(t, d.Check(y), hipsys.ErrorLaunchFailure, "read and written: the launch did not run")
	require.NoError(t, d.Call(writes, server.Dim3{X: 1}, 4, float32(2), x, y))
	assert.NoError(t, d.Check(y), "only written: the launch ran and rewrote y")
}

// Plain Go values are converted to the declared C type exactly, or refused naming the
// parameter.
func TestCallConvertsGoValues(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	k := server.DefineKernel(callSource, "call_types")
	out, err := server.AllocSlice[float64](d.Stream, 7)
	require.NoError(t, err)
	type count uint16
	require.NoError(t, d.Call(k, server.Dim3{X: 1}, 200, int8(-5), count(7), int64(1<<40), uint(1<<50), 0.5, true, out))
	got, err := server.ReadSlice[float64](d.Stream, out)
	require.NoError(t, err)
	assert.Equal(t, []float64{200, -5, 7, 1 << 40, 1 << 50, 0.5, 1}, got)

	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	// A float64 for a float is rounded as C++ rounds it; an integer a float holds exactly is taken.
	require.NoError(t, d.Call(callSaxpy, server.Dim3{X: 1}, int32(4), 0.1, x, y))
	assert.InDeltaSlice(t, []float32{10.1, 20.2, 30.3, 40.4}, readFloats(t, d.Stream, y), 1e-5)
	require.NoError(t, d.Call(callSaxpy, server.Dim3{X: 1}, uint8(2), 3, x.View(0, 16), y))

	for _, c := range []struct {
		name, want string
		args       []any
	}{
		{"int too big", "launch call_saxpy: argument 0 (n): int 4294967296 does not fit the kernel's int", []any{1 << 32, float32(2), x, y}},
		{"negative unsigned", "argument 2 (c): int -1 does not fit the kernel's unsigned int", []any{1, 2, -1, 4, 5, 6.0, false, out}},
		{"uchar too big", "argument 0 (a): int 256 does not fit the kernel's unsigned char", []any{256, 2, 3, 4, 5, 6.0, false, out}},
		{"float for int", "argument 0 (n): float64 given, the kernel takes int n: convert it to an integer type", []any{4.0, float32(2), x, y}},
		{"float overflow", "argument 1 (a): float64 1e+300 does not fit the kernel's float", []any{4, 1e300, x, y}},
		{"inexact int for float", "argument 1 (a): int 16777217 is not exactly a float", []any{4, 1<<24 + 1, x, y}},
		{"number for a buffer", "argument 2 (x): int given, the kernel takes a buffer (const float* x): pass a *server.Buffer or a server.View", []any{4, float32(2), 7, y}},
		{"buffer for a scalar", "argument 1 (a): a buffer given, the kernel takes float a", []any{4, x, y, y}},
		{"a string", "argument 1 (a): a string given, the kernel takes float a: pass a number", []any{4, "2", x, y}},
		{"nil", "argument 1 (a): nil given", []any{4, nil, x, y}},
		{"a Go slice", "argument 2 (x): a []float32 given, the kernel takes a buffer (const float* x): upload it first (server.UploadSlice)", []any{4, 2, []float32{1}, y}},
		{"too few", "the kernel takes 4 arguments, 3 given", []any{4, float32(2), x}},
		{"a zero Buffer", "argument 2: launch: server: invalid argument: nil buffer", []any{4, float32(2), &server.Buffer{}, y}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kernel := callSaxpy
			if len(c.args) == 8 {
				kernel = k
			}
			err := d.Call(kernel, server.Dim3{X: 1}, c.args...)
			require.ErrorIs(t, err, server.ErrInvalidArgument)
			assert.ErrorContains(t, err, c.want)
		})
	}
	require.NoError(t, d.Sync(x, y, out), "a refused call leaves no failure")
}

// A parameter of a type the launch does not know (a typedef) takes a value of its own
// sized Go type, or an int at the width the platform reports, and is checked by the
// platform's list where it has one.
func TestCallUnknownParameterType(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	k := server.DefineKernel(callSource, "call_typedef", server.Block(server.Dim3{X: 1}))
	y := upload(t, d.Stream, 0)
	require.NoError(t, d.Call(k, server.Dim3{X: 1}, int32(7), y))
	assert.Equal(t, []float32{7}, readFloats(t, d.Stream, y))
	p, _, fn := rawKernel(t, k)
	if _, err := p.FuncGetParams(fn); hipsys.StatusOf(err) == hipsys.ErrorNotSupported {
		err := d.Call(k, server.Dim3{X: 1}, 7, y)
		assert.ErrorContains(t, err, "argument 0 (n): int given, the kernel takes count_t n: the parameter's type is unknown")
		return
	}
	require.NoError(t, d.Call(k, server.Dim3{X: 1}, 9, y))
	assert.Equal(t, []float32{9}, readFloats(t, d.Stream, y))
	assert.ErrorContains(t, d.Call(k, server.Dim3{X: 1}, int64(9), y), "argument 0 (n): int64 given, the kernel takes 4 bytes")
}

// Argument errors name the parameter on every platform: the cpu device keeps no
// names, so they come from the source's declaration.
func TestCallErrorsNameTheParameterOnEveryPlatform(t *testing.T) {
	d, _ := openDevice(t, server.Options{}) // the platform's own list, no test table
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	err := d.Call(argSaxpy, grid(4), server.I64(4), server.F32(2), x.Arg(), y.Arg())
	assert.ErrorContains(t, err, "launch arg_saxpy: argument 0 (n): int64 given, the kernel takes 4 bytes")
	err = d.Call(argSaxpy, grid(4), server.I32(4), x.Arg(), x.Arg(), y.Arg())
	assert.ErrorContains(t, err, "launch arg_saxpy: argument 1 (a): a buffer given, the kernel takes a 4-byte value")
	err = d.Call(argSaxpy, grid(4), 4, x, x, y)
	assert.ErrorContains(t, err, "launch arg_saxpy: argument 1 (a): a buffer given, the kernel takes float a")
	for _, e := range []error{err} {
		assert.ErrorIs(t, e, server.ErrInvalidArgument)
		assert.NotContains(t, e.Error(), "buffers (its IO)")
	}
}

// Call with plain Go values allocates nothing in steady state: the boxed values stay
// on the caller's stack.
func TestCallWithGoValuesAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 1, 2, 3, 4)
	n, a := 1000, float32(math.Pi)
	// The best of three: on a loaded machine the stream's worker can fall behind the
	// launches and its queue grow past the commands it keeps for reuse, which allocates
	// whatever the arguments were (seen once in a full run beside other builds).
	device, raw := math.Inf(1), math.Inf(1)
	for range 3 {
		device = min(device, steadyAllocs(t, func() { _ = d.Call(callSaxpy, server.Dim3{X: 1}, n, a, x, y) },
			func() { require.NoError(t, d.Sync()) }))
		raw = min(raw, steadyAllocs(t, func() { _ = d.Call(callSaxpy, server.Dim3{X: 1}, server.I32(4), server.F32(a), x.Arg(), y.Arg()) },
			func() { require.NoError(t, d.Sync()) }))
		if device <= raw {
			break
		}
	}
	assert.LessOrEqual(t, device, raw, "Go values cost what Args cost")
}

// Device, Buffer and Kernel print as a person reads them.
func TestStrings(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	b := alloc(t, d.Stream, 4096)
	dev := d.Platform() + ":0"
	assert.Equal(t, "Device("+dev+")", d.String())
	assert.Regexp(t, `^Buffer\(#\d+, 4096 B on `+dev+`, stream 0\)$`, b.String())
	assert.Equal(t, "Kernel(call_saxpy)", callSaxpy.String())
	assert.Equal(t, "Kernel(nil)", (*server.Kernel)(nil).String())
	assert.Equal(t, "Buffer(nil)", (*server.Buffer)(nil).String())
}

// The info pointer is a pointer the declaration cannot tell from a buffer: with the IO
// inferred, the error says so; the kernel's own IO fixes it.
func TestCallInfoWithInferredIO(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	out := upload(t, d.Stream, 0, 0, 0, 0)
	inferred := server.DefineKernel(devSource, "dev_iota")
	err := d.Call(inferred, grid(4), out, server.Info(4, 2))
	require.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorContains(t, err, "the kernel declares 2 buffers (its IO), 1 given: the IO was inferred from the declaration's pointer parameters")
	given := server.DefineKernel(devSource, "dev_iota", server.IO(server.Write))
	require.NoError(t, d.Call(given, grid(4), out, server.Info(4, 2)))
	assert.Equal(t, []float32{0, 2, 4, 6}, readFloats(t, d.Stream, out))
}

// A buffer made for a slice remembers its element type: a kernel's pointer to another
// type is refused, naming both; b.Arg() passes the bytes as they are.
func TestCallChecksTheBuffersElementType(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	ints, err := server.UploadSlice(d.Stream, []int32{1, 2, 3, 4})
	require.NoError(t, err)
	y, err := server.UploadSlice(d.Stream, []float32{10, 20, 30, 40})
	require.NoError(t, err)
	err = d.Call(callSaxpy, server.Dim3{X: 1}, 4, 2, ints, y)
	require.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorContains(t, err, "argument 2 (x): a buffer of int32 given, the kernel takes a buffer (const float* x): pass b.Arg() to pass its bytes as they are")
	wide, err := server.AllocSlice[float64](d.Stream, 4)
	require.NoError(t, err)
	assert.ErrorContains(t, d.Call(callSaxpy, server.Dim3{X: 1}, 4, 2, y, wide.View(0, 16)), "argument 3 (y): a view of a buffer of float64 given")
	require.NoError(t, d.Call(callSaxpy, server.Dim3{X: 1}, 4, 0, ints.Arg(), y), "an Arg passes the bytes as they are")
	got, err := server.ReadSlice[float32](d.Stream, y)
	require.NoError(t, err)
	assert.Equal(t, []float32{10, 20, 30, 40}, got)
	words, err := server.UploadSlice(d.Stream, []uint32{0, 0, 0, 0, 0, 0})
	require.NoError(t, err)
	require.NoError(t, d.Call(server.DefineKernel(callSource, "call_shape"), server.Dim3{X: 1}, words),
		"an unsigned* takes a []uint32")
}

// listsNothing is a platform that cannot list a kernel's parameters, as NVIDIA drivers
// before CUDA 12.4.
type listsNothing struct{ hipsys.Platform }

func (listsNothing) FuncGetParams(hipsys.Function) ([]hipsys.KernelParam, error) {
	return nil, hipsys.NewError("test", "hipFuncGetParams", hipsys.ErrorNotSupported, "no list")
}

// Where the platform lists nothing, the declaration checks the launch and names the
// parameters; a declaration it cannot be sure of (a macro for the list) checks nothing.
func TestCallCheckedByTheDeclarationAlone(t *testing.T) {
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	d, err := server.OpenPlatform(listsNothing{p}, server.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	assert.ErrorContains(t, d.Call(callSaxpy, server.Dim3{X: 1}, server.I64(4), server.F32(2), x.Arg(), y.Arg()),
		"launch call_saxpy: argument 0 (n): int64 given, the kernel takes 4 bytes")
	assert.ErrorContains(t, d.Call(callSaxpy, server.Dim3{X: 1}, server.I32(4), x.Arg(), x.Arg(), y.Arg()),
		"argument 1 (a): a buffer given, the kernel takes a 4-byte value")
	assert.ErrorContains(t, d.Call(callSaxpy, server.Dim3{X: 1}, 4, float32(2), x),
		"the kernel takes 4 arguments, 3 given")
	require.NoError(t, d.Call(callSaxpy, server.Dim3{X: 1}, 4, float32(2), x, y))
	assert.Equal(t, []float32{12, 24, 36, 48}, readFloats(t, d.Stream, y))

	k := server.DefineKernel(callSource, "call_args", server.IO(server.Write))
	require.NoError(t, d.Call(k, server.Dim3{X: 1}, int32(5), y), "ARGS is two parameters: not refused as one")
	assert.Equal(t, float32(5), readFloats(t, d.Stream, y)[0])
}
