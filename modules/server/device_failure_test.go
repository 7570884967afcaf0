package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cubehip/cubehip/modules/hipsys"
	"github.com/cubehip/cubehip/modules/server"
)

func TestDeviceBadInput(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	other, _ := openDevice(t, server.Options{})
	released := alloc(t, d.Stream, 64)
	require.NoError(t, released.Release())
	foreign := alloc(t, other.Stream, 64)
	small := alloc(t, d.Stream, 16)

	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"write to released", func() error { return d.Write(released, []byte{1}) }, server.ErrReleased},
		{"read of released", func() error { _, err := d.Read(released); return err }, server.ErrReleased},
		{"release twice", released.Release, server.ErrReleased},
		{"launch with released", func() error {
			return d.Launch(devInc, grid(1), server.Args{Buffers: []*server.Buffer{released}, Scalars: []server.Scalar{server.U32(1)}})
		}, server.ErrReleased},
		{"write to foreign", func() error { return d.Write(foreign, []byte{1}) }, server.ErrForeign},
		{"sync foreign", func() error { return d.Sync(foreign) }, server.ErrForeign},
		{"write nil", func() error { return d.Write(nil, []byte{1}) }, server.ErrInvalidArgument},
		{"read nil", func() error { _, err := d.Read(nil); return err }, server.ErrInvalidArgument},
		{"write past the end", func() error { return d.Write(small, make([]byte, 17)) }, server.ErrOutOfBounds},
		{"read past the end", func() error { return d.ReadInto(make([]byte, 17), small) }, server.ErrOutOfBounds},
		{"launch nil kernel", func() error { return d.Launch(nil, grid(1), server.Args{}) }, server.ErrInvalidArgument},
		{"launch wrong buffer count", func() error {
			return d.Launch(devAdd, grid(1), server.Args{Buffers: []*server.Buffer{small}})
		}, server.ErrInvalidArgument},
		{"compile nil", func() error { return d.Compile(nil) }, server.ErrInvalidArgument},
		{"capture nil", func() error { _, err := d.Capture(nil); return err }, server.ErrInvalidArgument},
		{"profile nil", func() error { _, err := d.Profile(nil); return err }, server.ErrInvalidArgument},
		{"replay nil", func() error { var g *server.Graph; return g.Replay() }, server.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			assert.ErrorIs(t, err, c.want)
		})
	}
}

func TestDeviceClosed(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	b := alloc(t, d.Stream, 64)
	k := upload(t, d.Stream, 1, 2)
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devInc, grid(2), server.Args{Buffers: []*server.Buffer{k}, Scalars: []server.Scalar{server.U32(2)}})
	})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close is nil")

	calls := map[string]func() error{
		"alloc":   func() error { _, err := d.Alloc(1); return err },
		"write":   func() error { return d.Write(b, []byte{1}) },
		"read":    func() error { _, err := d.Read(b); return err },
		"launch":  func() error { return d.Launch(devEmpty, grid(1), server.Args{}) },
		"sync":    func() error { return d.Sync() },
		"replay":  g.Replay,
		"destroy": g.Destroy,
		"compile": func() error { return d.Compile(devEmpty) },
		"usage":   func() error { _, err := d.MemoryUsage(); return err },
		"profile": func() error { _, err := d.StartProfile(); return err },
	}
	for name, call := range calls {
		assert.ErrorIs(t, call(), server.ErrClosed, name)
	}
	assert.NoError(t, b.Release(), "a release after Close is a no-op")
}

func TestDeviceCompileError(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	broken := server.NewKernel(`extern "C" __global__ void dev_broken(float* out) { not C++ }`, "dev_broken", devBlock, []server.Access{server.Write})
	err := d.Compile(broken)
	require.ErrorIs(t, err, server.ErrCompilation)
	var ce *server.CompileError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "dev_broken", ce.Entry)

	// Launched anyway: the output carries the compile error, the call does not.
	out := alloc(t, d.Stream, 64)
	require.NoError(t, d.Launch(broken, grid(1), server.Args{Buffers: []*server.Buffer{out}}))
	_, err = d.Read(out)
	assert.ErrorIs(t, err, server.ErrCompilation)
	assert.ErrorIs(t, d.Check(out), server.ErrCompilation)
	assert.ErrorIs(t, d.Sync(out), server.ErrCompilation)
}

// TestDeviceInjectedFailure is the failure model through the Device: a launch the
// driver refuses leaves exactly its outputs carrying the failure; everything else reads
// fine; writing the output heals it.
func TestDeviceInjectedFailure(t *testing.T) {
	d, f := openDevice(t, server.Options{})
	in := upload(t, d.Stream, 1, 2, 3, 4)
	a, b, c := alloc(t, d.Stream, 16), alloc(t, d.Stream, 16), alloc(t, d.Stream, 16)
	require.NoError(t, d.Compile(devScale))
	require.True(t, f.FailNth("hipModuleLaunchKernel", 2, hipsys.ErrorLaunchFailure))
	for _, out := range []*server.Buffer{a, b, c} {
		require.NoError(t, d.Launch(devScale, grid(4), server.Args{
			Buffers: []*server.Buffer{in, out}, Scalars: []server.Scalar{server.F32(2), server.U32(4)},
		}))
	}
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, a))
	_, err := d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure)
	assert.Equal(t, []float32{2, 4, 6, 8}, readFloats(t, d.Stream, c))
	assert.Equal(t, []float32{1, 2, 3, 4}, readFloats(t, d.Stream, in), "inputs never carry a launch's failure")
	_, err = d.On(5).Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorLaunchFailure, "from any stream")

	// A consumer of b inherits the failure instead of reading stale bytes.
	sum := alloc(t, d.Stream, 16)
	require.NoError(t, d.Launch(devAdd, grid(4), server.Args{Buffers: []*server.Buffer{a, b, sum}, Scalars: []server.Scalar{server.U32(4)}}))
	assert.ErrorIs(t, d.Check(sum), hipsys.ErrorLaunchFailure)

	require.NoError(t, d.Write(b, floatBytes(9, 9, 9, 9)))
	assert.Equal(t, []float32{9, 9, 9, 9}, readFloats(t, d.Stream, b), "a write heals the buffer")
}

func TestDeviceCopyFailures(t *testing.T) {
	d, f := openDevice(t, server.Options{StagingChunk: 4 << 10})
	b := upload(t, d.Stream, make([]float32, 4096)...) // 16 KiB: four chunks

	require.True(t, f.FailNth("hipMemcpyHtoDAsync", 3, hipsys.ErrorInvalidValue))
	err := d.Write(b, make([]byte, 16<<10))
	require.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.ErrorIs(t, d.Check(b), hipsys.ErrorInvalidValue, "the half-written buffer carries it")
	_, err = d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)

	require.NoError(t, d.Write(b, make([]byte, 16<<10)))
	require.NoError(t, d.Check(b))

	// A read larger than the direct-copy limit always takes the staging pipeline.
	big := upload(t, d.Stream, make([]float32, 32<<10)...) // 128 KiB: 32 chunks
	require.True(t, f.FailNth("hipMemcpyDtoHAsync", 2, hipsys.ErrorInvalidValue))
	_, err = d.Read(big)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	_, err = d.Read(big)
	assert.NoError(t, err, "a read failure is the read's alone")

	// A small read of an idle stream is one blocking copy.
	require.NoError(t, d.Sync())
	before := f.Calls("hipMemcpyDtoH")
	require.True(t, f.FailNth("hipMemcpyDtoH", 1, hipsys.ErrorInvalidValue))
	_, err = d.Read(b)
	assert.ErrorIs(t, err, hipsys.ErrorInvalidValue)
	assert.Equal(t, before+1, f.Calls("hipMemcpyDtoH"))
	_, err = d.Read(b)
	assert.NoError(t, err)
}

// The zero value of every handle the package hands out is an error to use, never a
// panic: a buffer, a graph, a profile, a stream and a device nobody opened.
func TestZeroValuesAreErrors(t *testing.T) {
	var b server.Buffer
	assert.ErrorIs(t, b.Release(), server.ErrInvalidArgument)
	assert.NotEmpty(t, b.String())
	var g server.Graph
	assert.ErrorIs(t, g.Replay(), server.ErrInvalidArgument)
	assert.ErrorIs(t, g.Destroy(), server.ErrInvalidArgument)
	var p server.Profile
	_, err := p.Stop()
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	p.Abandon()
	var s server.Stream
	assert.ErrorIs(t, s.Sync(), server.ErrInvalidArgument)
	_, err = s.Alloc(8)
	assert.ErrorIs(t, err, server.ErrInvalidArgument)
	assert.ErrorIs(t, s.Launch(devEmpty, grid(1), server.Args{}), server.ErrInvalidArgument)
	var d *server.Device
	assert.NoError(t, d.Close())
	assert.ErrorIs(t, d.Compile(devEmpty), server.ErrInvalidArgument)
}

// A graph holds every buffer its work uses until it is destroyed, whatever the caller
// releases: a replay after the release writes the memory it always wrote, never a new
// allocation that took the released memory over.
func TestGraphHoldsItsBuffersUntilDestroyed(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	x := upload(t, d.Stream, 1, 2, 3, 4)
	y := alloc(t, d.Stream, 16)
	g, err := d.Capture(func(s server.Stream) error {
		return s.Launch(devScale, grid(4), server.Args{Buffers: []*server.Buffer{x, y}, Scalars: []server.Scalar{server.F32(100), server.U32(4)}})
	})
	require.NoError(t, err)
	require.NoError(t, x.Release())
	require.NoError(t, y.Release())
	require.NoError(t, d.Cleanup())
	// New buffers of the same size: with the graph's buffers back in the pool, these
	// would be handed their memory.
	var fresh []*server.Buffer
	for i := range 8 {
		fresh = append(fresh, upload(t, d.Stream, float32(i), float32(i), float32(i), float32(i)))
	}
	require.NoError(t, g.Replay())
	require.NoError(t, d.Sync())
	for i, b := range fresh {
		assert.Equal(t, []float32{float32(i), float32(i), float32(i), float32(i)}, readFloats(t, d.Stream, b), "buffer %d, allocated after the release", i)
	}
	require.NoError(t, g.Destroy())
}

// A compile error speaks in the user's terms: the platform's compiler named, the log
// once, its lines citing the user's source, nothing of the wrapper the platform
// compiles the kernel in.
func TestCompileErrorInTheUsersTerms(t *testing.T) {
	d, _ := openDevice(t, server.Options{})
	src := "#include <hip/hip_runtime.h>\n\nextern \"C\" __global__ void dev_typo(float* x) {\n    x[0] = undeclared_name;\n}\n"
	err := d.Compile(server.NewKernel(src, "dev_typo", devBlock, []server.Access{server.Write}))
	require.ErrorIs(t, err, server.ErrCompilation)
	msg := err.Error()
	compiler := map[string]string{"cpu": "g++", "amd": "hiprtc", "nvidia": "NVRTC"}[d.Platform()]
	assert.Contains(t, msg, `kernel "dev_typo" failed to compile (`+compiler+")")
	assert.Equal(t, 1, strings.Count(msg, "undeclared_name;"), "the log once: %s", msg)
	assert.Regexp(t, `dev_typo\.hip[:(]4`, msg, "the line number is the user's line")
	for _, internal := range []string{"CUBEHIP_", "In lambda function", "hiprtcCompileProgram", "#include <hip/hip_runtime.h>"} {
		assert.NotContains(t, msg, internal)
	}
}
