package server_test

import (
	"encoding/binary"
	"log/slog"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

const argSource = `#include <hip/hip_runtime.h>
extern "C" __global__ void arg_saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void arg_mid(const float* x, unsigned n, float a, float* y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
extern "C" __global__ void arg_types(signed char a, unsigned char b, short c, unsigned short d,
        int e, unsigned f, long long g, unsigned long long h, float x, double y, double* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e;
        out[5] = f; out[6] = (double)g; out[7] = (double)h; out[8] = x; out[9] = y;
    }
}
`

var (
	argSaxpy = server.NewKernel(argSource, "arg_saxpy", devBlock, []server.Access{server.Read, server.ReadWrite})
	argMid   = server.NewKernel(argSource, "arg_mid", devBlock, []server.Access{server.Read, server.Write})
	argTypes = server.NewKernel(argSource, "arg_types", devBlock, []server.Access{server.Write})
)

// paramTable answers FuncGetParams from the parameter lists a compiler gives this
// file's kernels, so that the Device's check runs the same on every platform (and on
// one that cannot list parameters). ModuleGetFunction records which entry each
// function is.
type paramTable struct {
	hipsys.Platform
	mu    sync.Mutex
	entry map[hipsys.Function]string
}

type param struct {
	name    string
	size    uint32
	pointer bool
}

var paramLists = map[string][]param{
	"arg_saxpy": {{"n", 4, false}, {"a", 4, false}, {"x", 8, true}, {"y", 8, true}},
	"arg_mid":   {{"x", 8, true}, {"n", 4, false}, {"a", 4, false}, {"y", 8, true}},
	"dev_scale": {{"in", 8, true}, {"out", 8, true}, {"a", 4, false}, {"n", 4, false}},
	"dev_iota":  {{"out", 8, true}, {"info", 8, true}},
	"arg_types": {{"a", 1, false}, {"b", 1, false}, {"c", 2, false}, {"d", 2, false}, {"e", 4, false},
		{"f", 4, false}, {"g", 8, false}, {"h", 8, false}, {"x", 4, false}, {"y", 8, false}, {"out", 8, true}},
}

func (p *paramTable) ModuleGetFunction(m hipsys.Module, name string) (hipsys.Function, error) {
	fn, err := p.Platform.ModuleGetFunction(m, name)
	if err == nil {
		p.mu.Lock()
		p.entry[fn] = name
		p.mu.Unlock()
	}
	return fn, err
}

// FuncGetParams answers from the table for this file's kernels, whatever the platform
// would (its names and kinds make every check testable on every platform), and asks the
// platform for the others.
func (p *paramTable) FuncGetParams(fn hipsys.Function) ([]hipsys.KernelParam, error) {
	p.mu.Lock()
	list, ok := paramLists[p.entry[fn]]
	p.mu.Unlock()
	if !ok {
		return p.Platform.FuncGetParams(fn)
	}
	var out []hipsys.KernelParam
	off := uint32(0)
	for _, q := range list {
		off = (off + q.size - 1) &^ (q.size - 1) // natural alignment
		kind := hipsys.ParamValue
		if q.pointer {
			kind = hipsys.ParamPointer
		}
		out = append(out, hipsys.KernelParam{Offset: off, Size: q.size, Kind: kind, Name: q.name})
		off += q.size
	}
	return out, nil
}

// openChecked opens the test platform's device 0 behind paramTable.
func openChecked(t testing.TB) *server.Device {
	t.Helper()
	p, err := hipsys.Open("auto")
	require.NoError(t, err)
	d, err := server.OpenPlatform(&paramTable{Platform: p, entry: map[hipsys.Function]string{}}, server.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	return d
}

// Scalars first, in the middle and last: each kernel gets its arguments in its own
// declared order and computes the right answer.
func TestCallTakesTheKernelsOrder(t *testing.T) {
	d := openChecked(t)
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	require.NoError(t, d.Call(argSaxpy, grid(4), server.I32(4), server.F32(2), x.Arg(), y.Arg()))
	assert.Equal(t, []float32{12, 24, 36, 48}, readFloats(t, d.Stream, y))

	out := upload(t, d.Stream, 0, 0, 0, 0)
	require.NoError(t, d.Call(argMid, grid(4), x.Arg(), server.U32(3), server.F32(-1), out.Arg()))
	assert.Equal(t, []float32{-1, -2, -3, 0}, readFloats(t, d.Stream, out))

	require.NoError(t, d.Call(devScale, grid(4), x.Arg(), out.Arg(), server.F32(3), server.U32(4)))
	assert.Equal(t, []float32{3, 6, 9, 12}, readFloats(t, d.Stream, out))

	// CubeCL's order through Launch stays checked the same way.
	require.NoError(t, d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, out}, Scalars: []server.Scalar{server.F32(5), server.U32(4)}}))
	assert.Equal(t, []float32{5, 10, 15, 20}, readFloats(t, d.Stream, out))
}

// Every HIP scalar type reaches the kernel with its value, at its width and alignment.
func TestCallPassesEveryScalarType(t *testing.T) {
	d := openChecked(t)
	out := alloc(t, d.Stream, 80)
	require.NoError(t, d.Call(argTypes, grid(1),
		server.I8(-7), server.U8(250), server.I16(-3000), server.U16(60000), server.I32(-100000),
		server.U32(4000000000), server.I64(-1<<40), server.U64(1<<50), server.F32(1.5), server.F64(-2.25), out.Arg()))
	got := make([]byte, 80)
	require.NoError(t, d.ReadInto(got, out))
	want := []float64{-7, 250, -3000, 60000, -100000, 4000000000, -(1 << 40), 1 << 50, 1.5, -2.25}
	for i, w := range want {
		assert.Equal(t, w, math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:])), "parameter %d", i)
	}
}

// A launch whose arguments do not fit the kernel is refused at the call, naming the
// argument, and queues and changes nothing: the buffers keep their contents and carry
// no failure.
func TestCallRefusesArgumentsThatDoNotFit(t *testing.T) {
	d := openChecked(t)
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 10, 20, 30, 40)
	other, err := server.Open(server.Options{Platform: d.Platform(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	foreign := alloc(t, other.Stream, 16)
	released := alloc(t, d.Stream, 16)
	require.NoError(t, released.Release())
	for _, c := range []struct {
		name, want string
		call       func() error
	}{
		{"too few", "the kernel takes 4 arguments, 3 given", func() error {
			return d.Call(argSaxpy, grid(4), server.F32(2), x.Arg(), y.Arg())
		}},
		{"too many", "the kernel takes 4 arguments, 5 given", func() error {
			return d.Call(argSaxpy, grid(4), server.I32(4), server.F32(2), x.Arg(), y.Arg(), server.I32(1))
		}},
		{"wrong width first", "launch arg_saxpy: argument 0 (n): int64 given, the kernel takes 4 bytes (server: invalid argument)", func() error {
			return d.Call(argSaxpy, grid(4), server.I64(4), server.F32(2), x.Arg(), y.Arg())
		}},
		{"buffer for a scalar", "argument 2 (a): a buffer given, the kernel takes a 4-byte value", func() error {
			return d.Call(argMid, grid(4), x.Arg(), server.U32(4), y.Arg(), server.F32(1))
		}},
		{"scalar for a buffer", "argument 0 (x): uint32 given, the kernel takes a pointer (a buffer)", func() error {
			return d.Call(argMid, grid(4), server.U32(4), x.Arg(), y.Arg(), server.F32(1))
		}},
		{"wrong width last", "argument 3 (n): float64 given, the kernel takes 4 bytes", func() error {
			return d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.F64(4)}})
		}},
		{"buffer count", "the kernel declares 1 buffers (its IO), 2 given", func() error {
			oneIO := server.NewKernel(argSource, "arg_saxpy", devBlock, []server.Access{server.ReadWrite})
			return d.Call(oneIO, grid(4), server.I32(4), server.F32(2), x.Arg(), y.Arg())
		}},
		{"a buffer for a scalar, one buffer too many for the IO", "argument 1 (a): a buffer given, the kernel takes float a", func() error {
			return d.Call(argSaxpy, grid(4), 4, x, x, y)
		}},
		{"info not last", "the info pointer must be the last argument", func() error {
			return d.Call(devIota, grid(4), server.Info(4, 1), y.Arg())
		}},
		{"missing info", "the kernel takes 2 arguments, 1 given", func() error {
			return d.Call(devIota, grid(4), y.Arg())
		}},
		{"zero arg", "argument 2: server: invalid argument: a zero Arg", func() error {
			return d.Call(argSaxpy, grid(4), server.I32(4), server.F32(2), server.Arg{}, y.Arg())
		}},
		{"buffer in Scalars", "scalar 0: server: invalid argument: a buffer is not a scalar", func() error {
			return d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{x.Arg(), server.U32(4)}})
		}},
		{"foreign buffer", "argument 2: launch: server: belongs to another device", func() error {
			return d.Call(argSaxpy, grid(4), server.I32(4), server.F32(2), foreign.Arg(), y.Arg())
		}},
		{"released buffer", "argument 3: launch: server: already released", func() error {
			return d.Call(argSaxpy, grid(4), server.I32(4), server.F32(2), x.Arg(), released.Arg())
		}},
		{"nil kernel", "nil kernel", func() error { return d.Call(nil, grid(4)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			switch c.name {
			case "foreign buffer":
				assert.ErrorIs(t, err, server.ErrForeign)
			case "released buffer":
				assert.ErrorIs(t, err, server.ErrReleased)
			default:
				assert.ErrorIs(t, err, server.ErrInvalidArgument)
			}
			require.NoError(t, d.Sync(x, y), "a refused launch leaves no failure on its buffers")
			assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, x))
			assert.Equal(t, []float32{10, 20, 30, 40}, readFloats(t, d.Stream, y))
		})
	}
	require.NoError(t, foreign.Release())
	require.NoError(t, other.Close())
}

// An explicit scalar of the right width but the wrong kind is refused where the
// kernel's declaration says the parameter's type: the platforms list sizes only, and a
// U32 for a float would reach the kernel as the float of its bits. Signedness may differ,
// as C converts between them, and a Struct passes bytes as they are. Both the platform's
// own list and the test table (a platform that cannot list them) get the check.
func TestCallRefusesAScalarOfTheWrongKind(t *testing.T) {
	plain, _ := openDevice(t, server.Options{})
	for name, d := range map[string]*server.Device{"platform": plain, "table": openChecked(t)} {
		t.Run(name, func(t *testing.T) {
			x := upload(t, d.Stream, 1, 2, 3, 4)
			y := upload(t, d.Stream, 10, 20, 30, 40)
			for _, c := range []struct {
				name, want string
				call       func() error
			}{
				{"integer for float", "launch arg_saxpy: argument 1 (a): uint32 given, the kernel takes float (server: invalid argument)", func() error {
					return d.Call(argSaxpy, grid(4), server.I32(4), server.U32(2), x.Arg(), y.Arg())
				}},
				{"float for int", "launch arg_saxpy: argument 0 (n): float32 given, the kernel takes int (server: invalid argument)", func() error {
					return d.Call(argSaxpy, grid(4), server.F32(4), server.F32(2), x.Arg(), y.Arg())
				}},
				{"integer for float, from a list", "argument 1 (a): int32 given, the kernel takes float", func() error {
					return d.CallArgs(argSaxpy, grid(4), []server.Arg{server.I32(4), server.I32(2), x.Arg(), y.Arg()})
				}},
				{"integer for float, CubeCL's order", "launch dev_scale: argument 2 (a): uint32 given, the kernel takes float", func() error {
					return d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.U32(2), server.U32(4)}})
				}},
				{"float for unsigned, CubeCL's order", "launch dev_scale: argument 3 (n): float32 given, the kernel takes unsigned int", func() error {
					return d.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(2), server.F32(4)}})
				}},
			} {
				t.Run(c.name, func(t *testing.T) {
					err := c.call()
					require.Error(t, err)
					assert.Contains(t, err.Error(), c.want)
					assert.ErrorIs(t, err, server.ErrInvalidArgument)
					require.NoError(t, d.Sync(x, y), "a refused launch leaves no failure on its buffers")
					assert.Equal(t, []float32{10, 20, 30, 40}, readFloats(t, d.Stream, y), "a refused launch changes nothing")
				})
			}

			// int for unsigned and unsigned for int: C converts, so both are taken.
			require.NoError(t, d.Call(argMid, grid(4), x.Arg(), server.I32(4), server.F32(3), y.Arg()))
			assert.Equal(t, []float32{3, 6, 9, 12}, readFloats(t, d.Stream, y))
			require.NoError(t, d.Call(argSaxpy, grid(4), server.U32(4), server.F32(1), x.Arg(), y.Arg()))
			assert.Equal(t, []float32{4, 8, 12, 16}, readFloats(t, d.Stream, y))

			// A Struct passes a float's bits as they are: the escape hatch.
			bits := make([]byte, 4)
			binary.LittleEndian.PutUint32(bits, math.Float32bits(2))
			require.NoError(t, d.Call(argMid, grid(4), x.Arg(), uint32(4), server.Struct(bits, 4), y.Arg()))
			assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, y))
		})
	}
}

// An ordered, checked launch allocates nothing in steady state beyond what the same
// launch straight through hipsys does: the parameters are looked up once per kernel.
func TestCallAllocatesNothing(t *testing.T) {
	d := openChecked(t)
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

// Where the platform itself lists a kernel's parameters (the cpu device's parse of the
// signature, AMD's code object metadata, NVIDIA's cuFuncGetParamInfo, which gives sizes
// only), a plain Device refuses what does not fit.
func TestCallCheckedByThePlatformsOwnList(t *testing.T) {
	p, _, fn := rawKernel(t, devScale)
	if _, err := p.FuncGetParams(fn); hipsys.StatusOf(err) == hipsys.ErrorNotSupported {
		t.Skipf("platform %s does not list kernel parameters (hipErrorNotSupported): its launches go unchecked", p.Name())
	}
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := upload(t, d.Stream, 0, 0, 0, 0)
	tooMany := d.Call(devScale, grid(4), x.Arg(), y.Arg(), server.F32(2), server.U32(4), server.U32(1))
	wide := d.Call(devScale, grid(4), x.Arg(), y.Arg(), server.F32(2), server.F64(4))
	assert.ErrorContains(t, tooMany, "launch dev_scale: server: invalid argument: the kernel takes 4 arguments, 5 given")
	assert.ErrorContains(t, wide, "launch dev_scale: argument 3")
	assert.ErrorContains(t, wide, "float64 given, the kernel takes")
	require.NoError(t, d.Sync(x, y))
	assert.Equal(t, []float32{0, 0, 0, 0}, readFloats(t, d.Stream, y), "refused launches change nothing")
}
